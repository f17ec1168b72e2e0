// The ingest path end to end on the real broker and ClickHouse: the Coinbase recording
// (with a garbage line) replayed into md.orderbook, Confluent-framed, read back per minute over HTTP.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { replayFile } from '../../ingest/replay.ts';
import { dlqTopicName, topicName } from '../../lib/kafka.ts';
import { call, dlqRecords, login, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const RECORDING = fileURLToPath(new URL('../../../shared/data/coinbase-btcusd-book.jsonl', import.meta.url));

interface Minute {
  minute: string;
  samples: number;
  mid: number;
  spread_abs: number;
  spread_bps_max: number;
  best_bid: number;
  best_ask: number;
}

/** The addendum's definitions, computed straight from the file. */
function expectedMinutes(file: string) {
  const minutes = new Map<number, { mids: number[]; spreads: number[]; last: { bid: number; ask: number } }>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const { t, b, a } = JSON.parse(line) as { t: number; b: [number, number][]; a: [number, number][] };
    const bid = Math.max(...b.filter((l) => l[1] > 0).map((l) => l[0]));
    const ask = Math.min(...a.filter((l) => l[1] > 0).map((l) => l[0]));
    const m = Math.floor(t / 60_000) * 60_000;
    const e = minutes.get(m) ?? { mids: [], spreads: [], last: { bid, ask } };
    e.mids.push((bid + ask) / 2);
    e.spreads.push(((ask - bid) / ((bid + ask) / 2)) * 1e4);
    e.last = { bid, ask };
    minutes.set(m, e);
  }
  return minutes;
}

async function readMinutes(token: string, exchange: string, pair: string, from: number, to: number): Promise<Minute[]> {
  const q = new URLSearchParams({ exchange, pair, time_start: new Date(from).toISOString(), time_end: new Date(to).toISOString() });
  const r = await call<Minute[]>('GET', `/v1/admin/orderbook/minutes/?${q}`, { token });
  expect(r.status).to.equal(200);
  return r.body;
}

describe('md.orderbook -> per-minute rows (Coinbase recording through Kafka)', function () {
  this.timeout(120_000);
  const w = world();
  const pair = `${w.asset}/USD`;
  let token: string;
  let dir: string | undefined;
  let file: string;
  let expected: ReturnType<typeof expectedMinutes>;
  let from: number;
  let to: number;

  before(async () => {
    // Read here, not at load: a missing recording fails this suite alone, with its path.
    if (!fs.existsSync(RECORDING)) throw new Error(`the Coinbase recording is not at ${RECORDING} (../shared/data beside the checkout)`);
    expected = expectedMinutes(RECORDING);
    from = Math.min(...expected.keys());
    to = Math.max(...expected.keys()) + 60_000;
    await seed(w.fixture);
    token = await login(w.users.staff.email, w.password);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-replay-'));
    file = path.join(dir, 'book.jsonl');
    const lines = fs.readFileSync(RECORDING, 'utf8').trim().split('\n');
    lines.splice(100, 0, 'this line is garbage {');
    fs.writeFileSync(file, lines.join('\n') + '\n');
  });
  // Only what before() got to: when it failed, that failure alone is the report.
  after(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

  it('writes one row per minute whose mid, spread and top of book match the recording', async () => {
    const { kafka, config, service } = testStack();
    const sent = await replayFile(kafka, { file, topic: topicName(config, 'md.orderbook'), exchange: w.ex2, pair, registry: service.registry });
    expect(sent).to.equal(601);
    const total = [...expected.values()].reduce((n, e) => n + e.mids.length, 0);
    const rows = await waitFor('all snapshots in minute rows', async () => {
      const r = await readMinutes(token, w.ex2, pair, from, to);
      return r.reduce((n, m) => n + m.samples, 0) === total && r;
    });
    expect(rows).to.have.length(expected.size);
    for (const row of rows) {
      const e = expected.get(Date.parse(row.minute))!;
      expect(e, row.minute).to.not.equal(undefined);
      const mean = e.mids.reduce((s, x) => s + x, 0) / e.mids.length;
      expect(row.samples).to.equal(e.mids.length);
      expect(row.mid).to.be.closeTo(mean, mean * 1e-12);
      expect(row.spread_bps_max).to.be.closeTo(Math.max(...e.spreads), 1e-9);
      expect(row.best_bid).to.equal(e.last.bid);
      expect(row.best_ask).to.equal(e.last.ask);
    }
  });

  it('sent the garbage line to md.orderbook.dlq with its reason', async () => {
    const { config } = testStack();
    const records = await dlqRecords(dlqTopicName(config, 'md.orderbook'), 1);
    const garbage = records.find((r) => r.value === 'this line is garbage {');
    expect(garbage, JSON.stringify(records)).to.not.equal(undefined);
    expect(garbage!.reason).to.match(/^not JSON/);
    expect(garbage!.key).to.equal(`${w.ex2}:${pair}`);
  });

  it('the same file produced again changes no minute: its snapshots are late for closed minutes', async () => {
    const before = await readMinutes(token, w.ex2, pair, from, to);
    const { kafka, config } = testStack();
    const status = async () => (await call('GET', '/v1/admin/status/', { token })).body.processors[topicName(config, 'md.orderbook')];
    const dead0 = (await status()).deadLettered;
    await replayFile(kafka, { file, topic: topicName(config, 'md.orderbook'), exchange: w.ex2, pair });
    await waitFor('the second copy consumed', async () => (await status()).deadLettered >= dead0 + 601);
    await new Promise((r) => setTimeout(r, 1500));
    const after = await readMinutes(token, w.ex2, pair, from, to);
    expect(after).to.deep.equal(before);
  });

  it('dead-letters a book of an unknown pair and a book that breaks the schema', async () => {
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    const unknownPair = `NOPE${w.tag}/USD`;
    await producer.send({
      topic: topicName(config, 'md.orderbook'),
      messages: [
        { key: `unknown-${w.tag}`, value: JSON.stringify({ exchange: w.ex, pair: unknownPair, ts: Date.now(), bids: [[1, 1]], asks: [[2, 1]] }) },
        { key: `schema-${w.tag}`, value: JSON.stringify({ exchange: w.ex, pair: `${w.asset}/USDT`, ts: Date.now(), bids: [[1, -1]], asks: [] }) },
      ],
    });
    await producer.disconnect();
    // Other test files dead-letter books on the same topic: only this file's two count.
    const mine = (all: { key: string | null }[]) => all.filter((x) => x.key === `unknown-${w.tag}` || x.key === `schema-${w.tag}`);
    const records = mine(await dlqRecords(dlqTopicName(config, 'md.orderbook'), (all) => mine(all).length >= 2)) as Awaited<ReturnType<typeof dlqRecords>>;
    expect(records.find((r) => r.key === `unknown-${w.tag}`)!.reason).to.equal(`unknown pair: ${w.ex} ${unknownPair}`);
    expect(records.find((r) => r.key === `schema-${w.tag}`)!.reason).to.contain('/bids/0/1 must be >= 0');
    // The status lists the last dead letters: these two, with the same reasons and offsets.
    const listed = await waitFor('the dead letters in the status', async () => {
      const status = await call('GET', '/v1/admin/status/', { token });
      const notes = mine(status.body.processors[topicName(config, 'md.orderbook')].recentDeadLetters as { key: string | null }[]);
      return notes.length === 2 && (notes as { key: string; reason: string; offset: string; partition: number; produced_at: string }[]);
    }, 10_000);
    expect(listed.map((n) => [n.key, n.reason, n.partition, n.offset]).sort()).to.deep.equal(records.map((r) => [r.key, r.reason, r.source.partition, r.source.offset]).sort());
    for (const n of listed) expect(Date.parse(n.produced_at)).to.be.within(Date.now() - 120_000, Date.now());
  });

  it('the minutes endpoint and the status (with its dead letters) are for staff; the minutes endpoint validates its query', async () => {
    const owner = await login(w.users.owner.email, w.password);
    expect((await call('GET', `/v1/admin/orderbook/minutes/?exchange=${w.ex}&pair=x`, { token: owner })).status).to.equal(403);
    for (const who of [owner, await login(w.users.maker.email, w.password)]) {
      const status = await call('GET', '/v1/admin/status/', { token: who });
      expect([status.status, status.body]).to.deep.equal([403, { detail: 'You do not have permission to perform this action.' }]);
    }
    const bad = await call('GET', '/v1/admin/orderbook/minutes/?exchange=x', { token });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.deep.equal({ pair: ['This field is required.'] });
  });
});
