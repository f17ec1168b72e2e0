// The uptime rows' mid price is the same whatever order a bucket's mids are added in: the
// engine's threads and parts decide that order, and a row kept between requests must have
// the bytes of one computed again (api/market-caches/uptime-rows.ts).
import { expect } from 'chai';
import { UptimeRepository } from '../../domain/market/repositories/uptime.ts';
import { marketWindow } from '../../domain/market/window.ts';
import { uniq } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

describe('uptime rows', () => {
  it("give a bucket's mid price exactly, in whichever order its minutes are summed", async () => {
    const { ch } = testStack().service.deps;
    const exchange = uniq('ex-');
    const start = Date.UTC(2026, 2, 3, 10, 0);
    // 0.1 + 0.2 + 0.3 is 0.6000000000000001 as floats, 0.3 + 0.2 + 0.1 is 0.6: two pairs
    // whose minutes hold the same mids in the two orders.
    const mids = { 'A/USD': [0.1, 0.2, 0.3], 'B/USD': [0.3, 0.2, 0.1] };
    await ch.insert(
      'book_minutes',
      Object.entries(mids).flatMap(([pair, ms]) =>
        ms.map((mid, i) => ({ exchange, pair, minute: (start + i * 60_000) / 1000, samples: 1, mid, spread_bps_max: 1, closed_at: start + 3_600_000 })),
      ),
    );
    const rows = await new UptimeRepository(ch).rows({
      kind: 'spread',
      pairs: Object.keys(mids).map((pair) => ({ exchange, pair, asset: pair.split('/')[0]! })),
      window: marketWindow('15m', { kind: 'range', from: start, to: start + 15 * 60_000 }, undefined, start + 86_400_000, Infinity),
      levels: [1],
    });
    // The exact sum of the three floats rounds to 0.6; summed as floats, pair A's was
    // 0.6000000000000001, and its mean differed from B's in the last digit.
    expect(rows.rows.map((r) => [r.pair, r.mid_price, r['1bps']])).to.deep.equal([
      ['A/USD', 0.6 / 3, 100],
      ['B/USD', 0.6 / 3, 100],
    ]);
  });
});
