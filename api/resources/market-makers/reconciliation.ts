// GET /v2/organizations/market-maker-metrics/reconciliation/ (beyond the specification):
// is the market maker's report true? Per market maker, exchange, pair and bucket where it
// both reported and was measured: the reported and the trusted (its wallets together)
// volume and depth at each level, the report's difference in percent of the measurement,
// and a flag where the report exceeds the measurement by more than `tolerance_pct`.
// What is compared with what: domain/market-makers/reconciliation.ts. The JSON answer is
// written as text, and that of sealed buckets kept between requests (sealed-answer.ts).
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { timeColumnNames, timestampOf } from '../../../domain/market/timestamps.ts';
import { INTERVALS } from '../../../domain/market/facts.ts';
import { reconcile, reconciledMetrics, type Reconciled } from '../../../domain/market-makers/reconciliation.ts';
import { DEFAULT_TOLERANCE_PCT, differencePctPacked, overstatedPacked } from '../../../domain/market-makers/values.ts';
import { validators } from '../market/schemas.ts';
import { makerPairColumns, parseMmRequest, type MmRequest } from './request.ts';
import type { MmHandler, MmServices } from './services.ts';
import { answerEncoding, sendPieces, type Encoding, type Piece } from '../../http/compressed-pieces.ts';
import { addText, answerCells, cellFinder, sealedAnswer, type Texts } from './sealed-answer.ts';
import { KIND, RowPacker } from './row-text.ts';
import { writeRowText } from './row-text-threads.ts';

/** A known value, or null for NaN (unknown, as Reconciled holds it). */
const known = (x: number): number | null => (Number.isNaN(x) ? null : x);

/** A metric's difference in percent of the measurement (NaN for none) from its sides: none unless both cover the same buckets (`both`). */
const diffOfSides = (reported: number, trusted: number, both: boolean): number => (both ? differencePctPacked(reported, trusted) : NaN);

/** Whether a metric is flagged by the overstatement rule at the tolerance: never unless both sides cover the same buckets. */
const flagOfSides = (reported: number, trusted: number, both: boolean, tolerance: number): boolean => both && overstatedPacked(reported, trusted, tolerance);

/** diffOfSides of a row's metric at its position `k` in `found`'s arrays. */
const diffOf = (found: Reconciled, k: number): number => diffOfSides(found.reported[k]!, found.trusted[k]!, found.matched[k] === 1);

/** flagOfSides of a row's metric at `k`. */
const flagOf = (found: Reconciled, k: number, tolerance: number): boolean => flagOfSides(found.reported[k]!, found.trusted[k]!, found.matched[k] === 1, tolerance);

export const reconciliation: MmHandler = (s) => async (ctx, raw) => {
  const out = wantsCsv(ctx);
  const req = await parseMmRequest(s.deps, ctx, raw, { validate: validators.any, intervals: INTERVALS });
  const tolerance = req.params.tolerance_pct ?? DEFAULT_TOLERANCE_PCT;
  const metrics = reconciledMetrics(req.levels);
  if (!out.csv) {
    const encoding = answerEncoding(ctx);
    sendPieces(ctx, await reconciliationJson(s, req, tolerance, metrics, encoding), encoding);
    return;
  }
  const found = await reconcile(s.readings, req, s.deps.config.latenessMs);
  const columns = [
    'organization',
    'asset',
    'exchange',
    'pair',
    ...timeColumnNames(req.window),
    'tolerance_pct',
    'flag',
    'flagged',
    ...metrics.flatMap((m) => [`${m}_reported`, `${m}_trusted`, `${m}_diff_pct`, `${m}_flag`]),
  ];
  const rows: Record<string, unknown>[] = [];
  found.rows.forEach((c, row) => {
    const at = row * found.width;
    const flagged = metrics.flatMap((_, i) => (flagOf(found, at + i, tolerance) ? [i] : []));
    const r: Record<string, unknown> = {
      ...makerPairColumns(req, c.maker, c.pair),
      ...timestampOf(req.window, c.b),
      tolerance_pct: tolerance,
      flag: flagged.length > 0,
      // CSV cells hold text: the flagged metrics space-separated.
      flagged: flagged.map((i) => metrics[i]).join(' '),
    };
    metrics.forEach((m, i) => {
      r[`${m}_reported`] = known(found.reported[at + i]!);
      r[`${m}_trusted`] = known(found.trusted[at + i]!);
      r[`${m}_diff_pct`] = known(diffOf(found, at + i));
      r[`${m}_flag`] = flagOf(found, at + i, tolerance);
    });
    rows.push(r);
  });
  sendRows(ctx, rows, columns, out);
};

/** The answer's JSON text, as JSON.stringify writes the rows (from packed rows: row-text.ts), sealed blocks' text kept between requests. */
async function reconciliationJson(s: MmServices, req: MmRequest, tolerance: number, metrics: string[], encoding: Encoding | undefined): Promise<Piece[]> {
  const w = req.window;
  const cells = answerCells(req);
  const names = ['tolerance_pct', 'flag', 'flagged', ...metrics.flatMap((m) => [`${m}_reported`, `${m}_trusted`, `${m}_diff_pct`, `${m}_flag`])];
  const keys = names.map((name) => `,${JSON.stringify(name)}:`);
  const kinds = Uint8Array.from(names, (name, i) => (i === 2 ? KIND.text : name === 'flag' || name.endsWith('_flag') ? KIND.bool : KIND.number));
  const quoted = metrics.map((m) => JSON.stringify(m));
  const compute = async (part: MmRequest): Promise<Texts> => {
    const cellOf = cellFinder(cells);
    const found = await reconcile(s.readings, part, s.deps.config.latenessMs);
    const packer = new RowPacker(keys, kinds, found.rows.length);
    const groups = packRows(found, cellOf, w, quoted, tolerance, packer);
    const written = await writeRowText(packer.packed());
    const texts: Texts = new Map();
    groups.forEach(([cell, b], g) => addText(texts, cell, b, written.group(g)));
    return texts;
  };
  return sealedAnswer(s, req, { cache: s.caches.reconciliation, variant: `reconciliation|${req.levels.join(',')}|${tolerance}`, cells, compute, encoding });
}

/** Metrics a row's flagged set is kept as a number for (one bit each, exact in a double). */
const MASK_METRICS = 52;

/**
 * The rows packed (row-text.ts), each a group of its own (a cell's bucket has one row): the
 * groups' cell keys and buckets. A row's `flagged` text is made once per set of flagged
 * metrics, found by the set's bits: a text built metric by metric for each row was most of
 * the garbage of a month (every metric of an overstating market maker's rows is flagged).
 */
function packRows(found: Reconciled, cellOf: ReturnType<typeof cellFinder>, w: MmRequest['window'], quoted: string[], tolerance: number, packer: RowPacker): [string, number][] {
  const timestamps = new Map<number, string>();
  const groups: [string, number][] = [];
  const n = quoted.length;
  const bit = Float64Array.from(quoted, (_, i) => (i < MASK_METRICS ? 2 ** i : 0));
  const flaggedTexts = new Map<number, number>();
  const flaggedAt = new Uint16Array(n);
  const { reported, trusted, matched } = found;
  found.rows.forEach((row, k) => {
    const cell = cellOf(row.maker, row.pair);
    if (!cell) return;
    let ts = timestamps.get(row.b);
    if (ts === undefined) timestamps.set(row.b, (ts = w.interval === 'a' ? '' : `,"timestamp":${JSON.stringify(timestampOf(w, row.b).timestamp)}`));
    const at = packer.add(cell.head, ts);
    const r = packer.values;
    const from = k * found.width;
    let mask = 0;
    let flags = 0;
    for (let i = 0; i < n; i++) {
      // Unknown sides are NaN in both: packed as they are. Each side read once: a month is
      // a million and a half metrics.
      const rv = reported[from + i]!;
      const tv = trusted[from + i]!;
      const both = matched[from + i] === 1;
      r[at + 3 + 4 * i] = rv;
      r[at + 4 + 4 * i] = tv;
      r[at + 5 + 4 * i] = diffOfSides(rv, tv, both);
      const flag = flagOfSides(rv, tv, both, tolerance);
      r[at + 6 + 4 * i] = flag ? 1 : 0;
      if (flag) {
        mask += bit[i]!;
        flaggedAt[flags++] = i;
      }
    }
    r[at] = tolerance;
    r[at + 1] = flags === 0 ? 0 : 1;
    let text = n <= MASK_METRICS ? flaggedTexts.get(mask) : undefined;
    if (text === undefined) {
      const names: string[] = [];
      for (let j = 0; j < flags; j++) names.push(quoted[flaggedAt[j]!]!);
      text = packer.text(`[${names.join(',')}]`);
      if (n <= MASK_METRICS) flaggedTexts.set(mask, text);
    }
    r[at + 2] = text;
    if (packer.endGroup()) groups.push([cell.key, row.b]);
  });
  return groups;
}
