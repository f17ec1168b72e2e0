// The demo's market makers restarted (ingest/synthetic/market-makers.ts): a bucket pushed in
// the earlier run that began before the new run's first whole minute is left as pushed; the
// buckets begun since, and those the earlier run never pushed, are reported.
import fs from 'node:fs';
import { expect } from 'chai';
import { SyntheticMarketMakers, bucketKey } from '../../ingest/synthetic/market-makers.ts';
import type { FixtureFile, OrderBookMessage } from '../../schemas/index.ts';

const MINUTE = 60_000;
const LATENESS = 120_000;
const fixture = JSON.parse(fs.readFileSync(new URL('../../ops/demo/fixture.json', import.meta.url), 'utf8')) as FixtureFile;

describe('the demo market makers after a restart', () => {
  const day = Date.UTC(2026, 2, 3);
  const hour = day + 10 * 3_600_000;
  // Restarted at 10:20:30: its first whole minute is 10:21.
  const restart = hour + 20 * MINUTE + 30_000;
  const reportAt = restart + 12 * MINUTE;
  const book = (ts: number): OrderBookMessage => ({ exchange: 'binance', pair: 'ACME/USDT', ts, bids: [[0.9995, 1000]], asks: [[1.0005, 1000]] });

  /** The buckets (interval and start) mm-one reports on binance ACME/USDT at `reportAt`, after ticks every 10 s from `restart`. */
  const reported = (pushedBefore: Set<string>) => {
    const makers = new SyntheticMarketMakers(fixture, {}, LATENESS, pushedBefore);
    for (let ts = restart; ts < reportAt; ts += 10_000) makers.tick([book(ts)], [], ts);
    const buckets = makers
      .reports(reportAt)
      .filter((m) => m.organization === 'mm-one' && m.exchange === 'binance' && m.pair === 'ACME/USDT' && m.metric === 'depth/bid_10bps')
      .map((m) => [m.interval, m.timestamp]);
    return buckets;
  };
  const key = (interval: string, start: number) => bucketKey('mm-one', 'binance', 'ACME/USDT', interval, start);

  it('reports every bucket of a first run', () => {
    expect(reported(new Set())).to.deep.equal([
      ['5m', hour + 25 * MINUTE],
      ['1h', hour],
      ['1d', day],
    ]);
  });

  it('leaves the buckets pushed before its start as pushed, and reports those begun since and those never pushed', () => {
    // The earlier run pushed the day, the 10:00 hour and the 10:25 bucket; 10:25 began after the restart's first whole minute.
    expect(reported(new Set([key('1d', day), key('1h', hour), key('5m', hour + 25 * MINUTE)]))).to.deep.equal([['5m', hour + 25 * MINUTE]]);
    // Never pushed before: reported from the minutes seen.
    expect(reported(new Set([key('1d', day)]))).to.deep.equal([
      ['5m', hour + 25 * MINUTE],
      ['1h', hour],
    ]);
  });
});
