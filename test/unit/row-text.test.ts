// The market-maker answers' rows written from packed numbers (api/resources/market-makers/
// row-text.ts), on one thread or two (row-text-threads.ts): each group's text must be what
// JSON.stringify writes of the same rows, numbers to 15 digits, joined by commas, a comma after
// each group, whatever the values.
import { expect } from 'chai';
import { KIND, RowPacker, writeGroups } from '../../api/resources/market-makers/row-text.ts';
import { rowTextHelped, startRowTextHelper, writeRowText } from '../../api/resources/market-makers/row-text-threads.ts';
import { rng } from '../../ingest/synthetic/market.ts';
import { jsonNumberText } from '../../lib/json-number.ts';

type Value = number | boolean | string | null | string[];

const COLUMNS = ['is_trusted', 'source', 'volume', 'depth_bid_2bps', 'depth_bid_5bps', 'flagged'];
const KINDS = Uint8Array.from([KIND.bool, KIND.text, KIND.number, KIND.number, KIND.number, KIND.text]);

/** Random rows in groups, packed, with the objects JSON.stringify is given for each group. */
function sample(seed: number, groups: number) {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const heads = [{ organization: { id: 'a', name: 'Maker "One" ✓' }, pair: 'ABC/USDT' }, { organization: { id: 'b', name: 'Zwei' }, pair: 'Ü/USDT' }];
  const stamps = [{}, { timestamp: '2026-11-01T00:00:00Z' }, { timestamp: '2026-11-02T00:00:00Z' }];
  const numbers = () => pick([0, -0, 1, 100, null, 1e-7, 123456789.123, 5e21, random() * 1e6, random(), -random() * 1e-3, NaN, Infinity]);
  const packer = new RowPacker(COLUMNS.map((c) => `,${JSON.stringify(c)}:`), KINDS);
  const expected: string[] = [];
  for (let g = 0; g < groups; g++) {
    const rows: Record<string, unknown>[] = [];
    const n = 1 + Math.floor(random() * 3);
    for (let i = 0; i < n; i++) {
      const head = pick(heads);
      const stamp = pick(stamps);
      const same = numbers();
      const values: Value[] = [pick([true, false, null]), pick(['wallet', 'organization']), numbers(), same, random() < 0.5 ? same : numbers(), pick([[], ['volume'], ['bid_2bps', 'ask_2bps']])];
      const headText = JSON.stringify(head).slice(0, -1);
      const stampText = 'timestamp' in stamp ? `,"timestamp":${JSON.stringify(stamp.timestamp)}` : '';
      const at = packer.add(headText, stampText);
      values.forEach((v, c) => {
        const x = KINDS[c] === KIND.text ? packer.text(JSON.stringify(v)) : typeof v === 'boolean' ? (v ? 1 : 0) : v === null ? NaN : (v as number);
        packer.values[at + c] = x;
      });
      // As written: a number to 15 digits (lib/json-number.ts, tested on its own).
      const as = (v: Value) => (typeof v === 'number' && Number.isFinite(v) ? Number(jsonNumberText(v)) : v);
      rows.push({ ...head, ...stamp, ...Object.fromEntries(COLUMNS.map((c, k) => [c, as(values[k]!)])) });
    }
    expect(packer.endGroup()).to.equal(true);
    expected.push(rows.map((r) => JSON.stringify(r)).join(','));
  }
  expect(packer.endGroup(), 'no rows since the last group').to.equal(false);
  return { packed: packer.packed(), expected };
}

describe('market-maker row text', () => {
  it('writes each group as JSON.stringify writes its rows', () => {
    const { packed, expected } = sample(1, 300);
    const { bytes, ends } = writeGroups(packed);
    // Each group followed by a comma.
    const text = (g: number) => Buffer.from(bytes.subarray(g === 0 ? 0 : ends[g - 1]! + 1, ends[g])).toString('utf8');
    expect(expected.map((_, g) => text(g))).to.deep.equal(expected);
    expect(Buffer.from(bytes).toString('utf8')).to.equal(`${expected.join(',')},`);
    // Part of the groups alone is the same text.
    const part = writeGroups(packed, 100, 180);
    expect(Buffer.from(part.bytes).toString('utf8')).to.equal(`${expected.slice(100, 180).join(',')},`);
  });

  it('writes the same on two threads as on one, for enough rows to share', async () => {
    startRowTextHelper();
    const { packed, expected } = sample(2, 3000);
    expect(packed.groupEnds[packed.groupEnds.length - 1]).to.be.greaterThan(4000);
    // The helper starts in the background: until it is ready, everything is written here.
    const before = rowTextHelped.rows;
    for (let attempt = 0; attempt < 10 && rowTextHelped.rows === before; attempt++) {
      const written = await writeRowText(packed);
      expect(expected.map((_, g) => Buffer.from(written.group(g)).toString('utf8'))).to.deep.equal(expected);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(rowTextHelped.rows - before, 'rows written by the helper').to.be.within(1000, packed.groupEnds[packed.groupEnds.length - 1]! - 1000);
  });
});
