// The caches of sealed market data on their own: uptime segments, window pieces, hour blocks, versions
// and the byte bound. Their use by the endpoints is tested in market.test.ts, against the
// real stack.
import { expect } from 'chai';
import { UptimeCache, locate, withBuckets, type Segment } from '../../api/market-caches/uptime-cache.ts';
import { PartialsCache } from '../../api/market-caches/window-partials.ts';
import { blockOf, segmentsOf } from '../../api/market-caches/minute-blocks.ts';
import { SeenBefore } from '../../api/market-caches/sealing.ts';

const row = (s: string) => Buffer.from(s);
const rowsOf = (s: Segment) => s.starts.map((_, j) => s.data.toString('utf8', s.offsets[j], s.offsets[j + 1]));

describe('uptime cache', () => {
  it('keeps a pair\'s buckets in time order, each row after a separator, so a run of buckets is one slice', () => {
    const s = withBuckets(undefined, [
      { start: 3, version: 1, row: row('{"c":3}') },
      { start: 1, version: 1, row: row('{"a":1}') },
      { start: 2, version: 1, row: undefined },
    ]);
    expect(s.starts).to.deep.equal([1, 2, 3]);
    expect(rowsOf(s)).to.deep.equal([',\n{"a":1}', '', ',\n{"c":3}']);
    expect(s.data.toString()).to.equal(',\n{"a":1},\n{"c":3}');
  });

  it('finds buckets only at the write count they were computed at, and replaces them in place', () => {
    let s = withBuckets(undefined, [1, 2, 3, 4].map((start) => ({ start, version: 10 * start, row: row(`{"b":${start}}`) })));
    expect(locate(s, [2, 3, 5], [20, 31, 50])).to.deep.equal([1, -1, -1]);
    expect(locate(undefined, [2], [20])).to.deep.equal([-1]);
    // Without versions: whether the buckets were computed at all (at any count).
    expect(locate(s, [2, 3, 5])).to.deep.equal([1, 2, -1]);
    s = withBuckets(s, [{ start: 3, version: 31, row: row('{"b":"new"}') }, { start: 5, version: 50, row: undefined }]);
    expect(locate(s, [2, 3, 5], [20, 31, 50])).to.deep.equal([1, 2, 4]);
    expect(rowsOf(s)).to.deep.equal([',\n{"b":1}', ',\n{"b":2}', ',\n{"b":"new"}', ',\n{"b":4}', '']);
    // Rebuilt without what lies before keepFrom.
    expect(withBuckets(s, [{ start: 6, version: 60, row: undefined }], 3).starts).to.deep.equal([3, 4, 5, 6]);
  });

  it('evicts the least recently used segments beyond its bytes, and keeps nothing when off', () => {
    const big = withBuckets(undefined, [{ start: 1, version: 0, row: row('x'.repeat(1000)) }]);
    const cache = new UptimeCache(3 * 1400);
    cache.set('a', big);
    cache.set('b', big);
    cache.set('c', big);
    expect(cache.get('a')).to.equal(big); // a is now the most recent
    cache.set('d', big);
    expect(cache.get('b')).to.equal(undefined);
    expect(cache.get('a')).to.equal(big);
    expect(cache.size).to.equal(3);
    expect(cache.bytes).to.be.at.most(3 * 1400);
    cache.set('a', withBuckets(undefined, []));
    expect(cache.bytes).to.be.below(3 * 1400 - 1000);

    const off = new UptimeCache(0);
    off.set('a', big);
    expect(off.enabled).to.equal(false);
    expect(off.get('a')).to.equal(undefined);
  });
});

describe('window pieces cache', () => {
  const trade = (trades: number) => ({ exchange: 'x', pair: 'A/B', b: 0, trades, amount: 1, notional: 1, volume_usd: 1, usd_trades: 1 });

  it('answers a piece only at the write count it was computed at, adding pairs computed at the same count', () => {
    const cache = new PartialsCache(1 << 20);
    cache.put('trade', 'trade|hours|1|2', 5, [['p1', trade(1)]]);
    cache.put('trade', 'trade|hours|1|2', 5, [['p2', null]]);
    expect([...cache.at('trade|hours|1|2', 5)!.rows.keys()]).to.deep.equal(['p1', 'p2']);
    const bytes = cache.bytes;
    cache.put('trade', 'trade|hours|1|2', 5, [['p1', trade(2)]]);
    expect(cache.bytes).to.equal(bytes);
    expect(cache.at('trade|hours|1|2', 6)).to.equal(undefined);
    expect(cache.at('trade|hours|1|2', 5)).to.equal(undefined); // dropped when found stale
    expect(cache.bytes).to.equal(0);
  });
});

describe('hour blocks', () => {
  const H = Date.UTC(2026, 0, 7, 1);
  const minute = (i: number, trades: number) => ({ exchange: 'x', pair: 'A/B', b: (H + i * 60_000) / 1000, trades, amount: trades, notional: trades, volume_usd: trades, usd_trades: trades });

  it("split a window's minute pieces at hour starts, and merge any run of an hour's minutes as its minutes summed", () => {
    expect(segmentsOf([{ table: 'minutes', from: H - 20 * 60_000, to: H + 5 * 60_000 }, { table: 'hours', from: H + 3_600_000, to: H + 7_200_000 }])).to.deep.equal([
      { hour: H - 3_600_000, from: H - 20 * 60_000, to: H },
      { hour: H, from: H, to: H + 5 * 60_000 },
    ]);
    // Minutes 0..59 with i + 1 trades, minute 7 without rows; a second pair without any.
    const rows = Array.from({ length: 60 }, (_, i) => minute(i, i + 1)).filter((r) => r.trades !== 8);
    const block = blockOf('trade', H, 3, ['x\u0000A/B', 'x\u0000C/D'], rows);
    expect(block.pairs.get('x\u0000C/D')).to.equal(null);
    const pair = block.pairs.get('x\u0000A/B')!;
    const sum = (i: number, j: number) => rows.filter((r) => r.b >= (H + i * 60_000) / 1000 && r.b < (H + j * 60_000) / 1000).reduce((n, r) => n + r.trades, 0);
    for (const [i, j] of [[0, 60], [0, 1], [0, 8], [7, 8], [8, 60], [59, 60], [3, 40], [10, 11]] as const) {
      const got = pair.range(i, j) as unknown as { trades: number } | undefined;
      expect(got?.trades ?? 0, `${i}-${j}`).to.equal(sum(i, j));
    }
    expect(pair.range(7, 8)).to.equal(undefined);
    expect(block.version).to.equal(3);
    expect(block.bytes).to.be.greaterThan(0);
  });

  it('add pairs computed at the same write count to a block, and start anew at another', () => {
    const first = blockOf('trade', H, 3, ['x\u0000A/B'], [minute(0, 1)]);
    const more = blockOf('trade', H, 3, ['x\u0000C/D'], [], first);
    expect(more).to.equal(first);
    expect([...more.pairs.keys()]).to.deep.equal(['x\u0000A/B', 'x\u0000C/D']);
    const other = blockOf('trade', H, 4, ['x\u0000C/D'], [], first);
    expect([...other.pairs.keys()]).to.deep.equal(['x\u0000C/D']);
  });

  it('are kept in the pieces cache by key and write count', () => {
    const cache = new PartialsCache(1 << 20);
    cache.putBlock('trade|block|1', blockOf('trade', H, 3, ['x\u0000A/B'], [minute(0, 1)]));
    expect(cache.block('trade|block|1', 3)?.version).to.equal(3);
    expect(cache.at('trade|block|1', 3)).to.equal(undefined); // not a piece
    cache.putBlock('trade|block|1', blockOf('trade', H, 3, ['x\u0000A/B'], [minute(0, 1)]));
    expect(cache.block('trade|block|1', 4)).to.equal(undefined);
    expect(cache.block('trade|block|1')).to.equal(undefined); // dropped when found stale
    expect(cache.bytes).to.equal(0);
  });
});

describe('seen before', () => {
  it('tells a key asked for before, forgetting the oldest beyond its bound', () => {
    const seen = new SeenBefore(2);
    expect([seen.check('a'), seen.check('a'), seen.check('b'), seen.check('c')]).to.deep.equal([false, true, false, false]);
    expect(seen.size).to.equal(2);
    expect([seen.check('a'), seen.check('c')]).to.deep.equal([false, true]); // a was forgotten for c, b for a
  });

  it('is forgotten with a cache emptied as after a restart, kept when asked', () => {
    const cache = new PartialsCache(1 << 20);
    cache.seen.check('k');
    cache.clear({ keepSeen: true });
    expect(cache.seen.check('k')).to.equal(true);
    cache.clear();
    expect(cache.seen.check('k')).to.equal(false);
  });
});
