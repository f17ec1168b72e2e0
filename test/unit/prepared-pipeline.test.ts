// The order-book pipeline with its steps up to compute in the helper thread
// (processors/market/prepare.ts) against the same pipeline on one thread: the same outcome
// for every message, good or bad, and the same minute rows.
import { expect } from 'chai';
import type { KafkaMessage } from 'kafkajs';
import { frameHeader } from '../../lib/schema-registry.ts';
import type { QuoteMid } from '../../domain/market/prices.ts';
import { ObservedRates, Preparer } from '../../processors/market/prepare.ts';
import { WindowedPipeline } from '../../processors/market/windowed-pipeline.ts';
import { orderBookSpec } from '../../processors/orderbook/processor.ts';
import type { KnownPairs } from '../../processors/reference-cache.ts';
import { ValueDecoder } from '../../processors/shell/decode-value.ts';
import type { Outcome } from '../../processors/shell/outcome.ts';

const M = 60_000;
const T0 = 1_700_000_040_000 - (1_700_000_040_000 % M);
const OWN_ID = 7;

/** Known pairs as a plain set: those of the exchange "x". */
const known = { has: (exchange: string) => exchange === 'x', loads: 1, keys: () => ['x:ETH/USDT', 'x:ABC/ETH'], refresh: async () => undefined } as unknown as KnownPairs;
/** A registry that knows no schema id but the processor's own. */
const registry = { cache: { getSchema: () => undefined }, getSchema: () => Promise.reject(Object.assign(new Error('not found'), { status: 404 })) };

function pipeline(preparer?: Preparer, rates = new ObservedRates()) {
  const p = new WindowedPipeline(orderBookSpec(rates), {
    decoder: new ValueDecoder(registry as never, () => T0, OWN_ID),
    repo: undefined as never,
    rollups: undefined,
    known,
    groupId: 'g',
    topic: 't',
    latenessMs: 2 * M,
    now: () => T0,
    preparer,
  });
  p.windows.load([], new Map());
  return { p, rates };
}

const book = (exchange: string, pair: string, ts: number | string, mid: number, levels = 3) => ({
  exchange,
  pair,
  ts,
  bids: Array.from({ length: levels }, (_, k) => [mid * (1 - (k + 1) / 1000), 1 + k]),
  asks: Array.from({ length: levels }, (_, k) => [mid * (1 + (k + 1) / 1000), 2 + k]),
});

function messages(): KafkaMessage[] {
  const values: (Buffer | null)[] = [];
  for (let k = 0; k < 40; k++) {
    values.push(Buffer.from(JSON.stringify(book('x', 'ETH/USDT', T0 + k * 9_000, 2000 + k))));
    values.push(Buffer.from(JSON.stringify(book('x', 'ABC/ETH', new Date(T0 + k * 9_000 + 1).toISOString(), 0.01 + k / 1e4))));
  }
  values.push(
    Buffer.from(JSON.stringify({ ...book('x', 'ETH/USDT', T0 + 351_005, 2000), bids: [[2100, 1]] })), // crossed
    Buffer.from(JSON.stringify({ ...book('x', 'ETH/USDT', T0 + 351_006, 2000), asks: [] })), // an empty side
    Buffer.from(JSON.stringify(book('nowhere', 'ETH/USDT', T0 + 7, 9999))), // unknown pair
    Buffer.from(JSON.stringify({ ...book('nowhere', 'ETH/USDT', T0 + 7, 2000), asks: [] })), // unknown pair first
    Buffer.from('{"exchange": "x", '), // not JSON
    Buffer.from(JSON.stringify({ exchange: 'x', pair: 'ETH/USDT', ts: T0 })), // schema
    Buffer.from(JSON.stringify(book('x', 'ETH/USDT', 'yesterday', 2000))), // time
    Buffer.concat([frameHeader(OWN_ID), Buffer.from(JSON.stringify(book('x', 'ETH/USDT', T0 + 6 * M, 2001)))]), // framed, own schema
    Buffer.concat([frameHeader(OWN_ID + 1), Buffer.from(JSON.stringify(book('x', 'ETH/USDT', T0 + 9, 2001)))]), // framed, unknown id
    Buffer.from([0, 1]), // a frame shorter than its header
    null,
    Buffer.from(JSON.stringify(book('x', 'ETH/USDT', T0 - 10 * M, 2000))), // late
    Buffer.from(JSON.stringify({ ...book('x', 'ETH/USDT', T0 - 10 * M, 2000), bids: [[2100, 1]] })), // late and crossed
  );
  return values.map((value, i) => ({ key: null, value, offset: String(i), timestamp: '0', attributes: 0, headers: {} }) as unknown as KafkaMessage);
}

async function run(p: WindowedPipeline<never, never, object> | ReturnType<typeof pipeline>['p'], msgs: KafkaMessage[], prepared?: unknown[]) {
  const outcomes: Outcome<void>[] = [];
  for (let i = 0; i < msgs.length; i++) {
    const b = prepared ? Math.floor(i / 16) : 0;
    outcomes.push(await p.process(msgs[i]!, 0, prepared?.[b], i % 16));
  }
  p.tick(new Map([[0, 60_000]]));
  // In order of pair and minute: a minute that waited for its quote rate closes later.
  const rows = p.windows.takeClosed().sort((a, b) => a.pair.localeCompare(b.pair) || a.minute - b.minute);
  return { outcomes, rows: rows.map((m) => ({ ...m, holds: [...m.holds].map(([k, h]) => [k, h.offset]) })) };
}

describe('the order-book pipeline with its steps in a helper thread', () => {
  let preparer: Preparer | undefined;
  after(() => preparer?.close());

  it('gives every message the outcome and every minute the row it gets on one thread', async () => {
    const msgs = messages();
    const here = await run(pipeline().p, msgs);
    const told: QuoteMid[] = [];
    // As the processor's: the consumer's thread observes what the helper told (processors/market/consumer.ts).
    const rates = new ObservedRates();
    preparer = new Preparer({ topic: 'md.orderbook', ownSchemaId: OWN_ID }, (m) => {
      told.push(m);
      rates.observe(m.pair, m.mid, m.ts, m.exchange);
    });
    const { p } = pipeline(preparer, rates);
    // In batches, as kafkajs hands them over.
    const prepared: unknown[] = [];
    for (let i = 0; i < msgs.length; i += 16) prepared.push(await p.prepare!(msgs.slice(i, i + 16)));
    const there = await run(p, msgs, prepared);
    expect(there.outcomes).to.deep.equal(here.outcomes);
    expect(here.outcomes.filter((o) => o.kind === 'dead-letter')).to.have.length(10);
    // Late first: a late book is dead-lettered as late, crossed or not.
    expect(here.outcomes.slice(-2).map((o) => o.kind === 'dead-letter' && o.reason.startsWith('late:'))).to.deep.equal([true, true]);
    expect(here.outcomes.filter((o) => o.kind === 'skip')).to.have.length(2);
    expect(there.rows).to.have.length.above(4);
    expect(there.rows).to.deep.equal(here.rows);
    // Every mid the helper observed is told with its time, never an unknown pair's.
    const eth = told.filter((m) => m.pair === 'ETH/USDT');
    expect(eth.slice(0, 3).map((m) => [m.exchange, m.ts, m.mid])).to.deep.equal([0, 1, 2].map((k) => ['x', T0 + k * 9_000, 2000 + k]));
    expect(eth.map((m) => m.mid)).to.not.include(9999);
    expect(here.outcomes.filter((o) => o.kind === 'ok')).to.have.length(81);
  });
});
