// A message of a pair quoted in another currency waits for its quote rate
// (processors/market/windowed-pipeline.ts): until the rate's sources were seen up to its
// time, or stood still for the longest wait; its minute stays open meanwhile.
import { expect } from 'chai';
import type { KafkaMessage } from 'kafkajs';
import { QuoteRates } from '../../domain/market/prices.ts';
import { WindowedPipeline } from '../../processors/market/windowed-pipeline.ts';
import type { KnownPairs } from '../../processors/reference-cache.ts';
import { ValueDecoder } from '../../processors/shell/decode-value.ts';
import { tradeSpec } from '../../processors/trades/processor.ts';
import { orderBookSpec } from '../../processors/orderbook/processor.ts';

const M = 60_000;
const T0 = Date.UTC(2026, 3, 1, 10, 0);
const known = { has: () => true, loads: 1, keys: () => ['x:ABC/ETH', 'x:ETH/USDT'], refresh: async () => undefined } as unknown as KnownPairs;
const registry = { cache: { getSchema: () => undefined }, getSchema: () => Promise.reject(new Error('none')) };

function pipeline(spec: 'trades' | 'books', maxWaiting?: number) {
  const clock = { now: T0 + 10 * M };
  const rates = new QuoteRates();
  const deps = {
    decoder: new ValueDecoder(registry as never, () => clock.now),
    repo: undefined as never,
    rollups: undefined,
    known,
    groupId: 'g',
    topic: 't',
    latenessMs: 2 * M,
    now: () => clock.now,
    maxWaiting,
  };
  const p = spec === 'trades' ? new WindowedPipeline(tradeSpec(rates), deps) : new WindowedPipeline(orderBookSpec(rates), deps);
  p.windows.load([], new Map());
  return { p, rates, clock };
}

function setup(maxWaiting?: number) {
  const { p, rates, clock } = pipeline('trades', maxWaiting);
  let offset = 0;
  const trade = (ts: number, price: number, amount: number) =>
    p.process({ key: null, value: Buffer.from(JSON.stringify({ exchange: 'x', pair: 'ABC/ETH', ts, price, amount, side: 'buy', id: `t${offset}` })), offset: String(offset++), timestamp: '0', attributes: 0, headers: {} } as unknown as KafkaMessage, 0);
  return { p, rates, clock, trade };
}

describe('a message waiting for its quote rate', () => {
  it('is converted with the rate of its own time once the sources pass it, and holds the commit point meanwhile', async () => {
    const { p, rates, trade } = setup();
    rates.observe('ETH/USDT', 2_000, T0, 'x');
    expect((await trade(T0 + 1_000, 0.5, 2)).kind).to.equal('ok');
    expect((await trade(T0 + 2_000, 0.5, 4)).kind).to.equal('ok');
    p.tick(new Map([[0, 60_000]]));
    expect(p.commitPoint(0, 2n)).to.equal(0n);
    rates.observe('ETH/USDT', 3_000, T0 + 1_500, 'x');
    p.tick(new Map([[0, 60_000]]));
    // The first one took its rate (the mid at T0); the second still waits for the sources to reach its time.
    expect(p.commitPoint(0, 2n)).to.equal(0n);
    rates.observe('ETH/USDT', 4_000, T0 + 5_000, 'x');
    p.tick(new Map([[0, 60_000]]));
    p.tick(new Map([[0, 60_000]]));
    const [minute] = p.windows.takeClosed();
    expect(minute!.row).to.include({ volume_usd: 0.5 * 2 * 2_000 + 0.5 * 4 * 3_000, trades: 2 });
  });

  it('stops waiting once the sources stood still for the longest wait: the latest rate before it counts', async () => {
    const { p, rates, clock, trade } = setup();
    rates.observe('ETH/USDT', 2_000, T0, 'x');
    await trade(T0 + 1_000, 0.5, 2);
    p.tick(new Map([[0, 60_000]]));
    clock.now += 29_000;
    p.tick(new Map([[0, 60_000]]));
    expect(p.windows.takeClosed()).to.deep.equal([]);
    clock.now += 2_000;
    p.tick(new Map([[0, 60_000]]));
    p.tick(new Map([[0, 60_000]]));
    const [minute] = p.windows.takeClosed();
    expect(minute!.row).to.include({ volume_usd: 0.5 * 2 * 2_000, trades: 1 });
  });

  it('is not kept when its book is crossed or one-sided: skipped at once, as without a wait', async () => {
    const { p, rates } = pipeline('books');
    rates.observe('ETH/USDT', 2_000, T0, 'x');
    let offset = 0;
    const book = (ts: number, bids: number[][], asks: number[][]) =>
      p.process({ key: null, value: Buffer.from(JSON.stringify({ exchange: 'x', pair: 'ABC/ETH', ts, bids, asks })), offset: String(offset++), timestamp: '0', attributes: 0, headers: {} } as unknown as KafkaMessage, 0);
    // Unsorted sides, the best bid above the best ask once sorted.
    expect(await book(T0 + 1_000, [[0.49, 1], [0.52, 1]], [[0.55, 1], [0.51, 1]])).to.deep.equal({ kind: 'skip', reason: 'crossed' });
    expect(await book(T0 + 2_000, [[0.49, 1]], [[0.51, 0]])).to.deep.equal({ kind: 'skip', reason: 'empty-side' });
    expect((await book(T0 + 3_000, [[0.49, 1]], [[0.51, 1]])).kind).to.equal('ok');
    // Only the last waits, holding the commit point at its offset.
    expect(p.commitPoint(0, 3n)).to.equal(2n);
  });

  it('fills its partition at the most it may keep waiting: the shell reads no further message of it until some are released', async () => {
    const { p, rates, trade } = setup(3);
    rates.observe('ETH/USDT', 2_000, T0, 'x');
    for (let i = 1; i <= 2; i++) await trade(T0 + i * 1_000, 0.5, 1);
    expect([p.full(0), p.full(1)]).to.deep.equal([false, false]);
    await trade(T0 + 3_000, 0.5, 1);
    expect([p.full(0), p.full(1)]).to.deep.equal([true, false]);
    rates.observe('ETH/USDT', 2_000, T0 + 2_500, 'x');
    p.tick(new Map([[0, 0]]));
    // Two took their rate; the third still waits.
    expect(p.full(0)).to.equal(false);
  });
});
