import { expect } from 'chai';
import { bookMetrics, bookMetricsArrays, type BookMetrics } from '../../processors/metrics/book.ts';
import { LEVELS_BPS, SLIPPAGE_SIZES_USD, levelName } from '../../domain/market/facts.ts';
import { QuoteRates } from '../../domain/market/prices.ts';
import { BookMinute } from '../../processors/orderbook/minute.ts';
import type { Level } from '../../schemas/index.ts';

const bids: Level[] = [[99, 1], [100, 2], [98, 0], [97.5, 10]];
const asks: Level[] = [[101, 3], [102, 1], [110, 100]];

/** Depth straight from the definition, for comparison. */
function depth(levels: Level[], mid: number, l: number, side: 'bid' | 'ask') {
  const inside = levels.filter(([p, a]) => a > 0 && (side === 'bid' ? p >= mid * (1 - l / 1e4) : p <= mid * (1 + l / 1e4)));
  return { usd: inside.reduce((s, [p, a]) => s + p * a, 0), n: inside.length };
}

describe('book metrics (addendum section 4)', () => {
  const m = bookMetrics(bids, asks, 1) as BookMetrics;

  it('top of book, mid and spread, whatever the level order', () => {
    expect(m).to.include({ bestBid: 100, bestBidAmount: 2, bestAsk: 101, bestAskAmount: 3, mid: 100.5, spreadAbs: 1 });
    expect(m.spreadBps).to.be.closeTo((1 / 100.5) * 1e4, 1e-9);
  });

  it('depth and counts at every level of L match the definition', () => {
    LEVELS_BPS.forEach((l, i) => {
      const b = depth(bids, m.mid, l, 'bid');
      const a = depth(asks, m.mid, l, 'ask');
      expect(m.bidDepth![i], `bid_${levelName(l)}bps`).to.be.closeTo(b.usd, 1e-9);
      expect(m.askDepth![i], `ask_${levelName(l)}bps`).to.be.closeTo(a.usd, 1e-9);
      expect(m.bidCount[i]).to.equal(b.n);
      expect(m.askCount[i]).to.equal(a.n);
    });
    // 100 bps: bids >= 99.495 (100 only), asks <= 101.505 (101 only)
    expect(m.bidDepth![LEVELS_BPS.indexOf(100)]).to.equal(200);
    expect(m.askDepth![LEVELS_BPS.indexOf(100)]).to.equal(303);
  });

  it('converts depth to USD with the quote rate, and is null without one', () => {
    const btc = bookMetrics(bids, asks, 50_000) as BookMetrics;
    expect(btc.bidDepth![24]).to.be.closeTo(m.bidDepth![24]! * 50_000, 1e-6);
    const unknown = bookMetrics(bids, asks, null) as BookMetrics;
    expect(unknown.bidDepth).to.equal(null);
    expect(unknown.slippageBuy.every((x) => x === null)).to.equal(true);
    expect(unknown.bidCount).to.deep.equal(m.bidCount);
  });

  it('slippage walks the book and is null when the book holds less', () => {
    // buy 100 USD: all at 101 -> (101/100.5 - 1) * 1e4
    expect(m.slippageBuy[0]).to.be.closeTo((101 / 100.5 - 1) * 1e4, 1e-9);
    // buy 1000 USD: 303 at 101 (3 units), 102 at 102 (1 unit), 595 at 110 (5.409 units)
    const units = 3 + 1 + 595 / 110;
    expect(m.slippageBuy[1]).to.be.closeTo((1000 / units / 100.5 - 1) * 1e4, 1e-9);
    // sell 100 USD at 100 -> (1 - 100/100.5) * 1e4
    expect(m.slippageSell[0]).to.be.closeTo((1 - 100 / 100.5) * 1e4, 1e-9);
    // the ask side holds 303 + 102 + 11000 USD: 50,000 cannot be filled
    expect(m.slippageBuy[SLIPPAGE_SIZES_USD.indexOf(50_000)]).to.equal(null);
  });

  it('tick is the smallest positive step between adjacent levels', () => {
    // 98 has no amount, so the bid steps are 1 and 1.5; the ask steps 1 and 8
    expect(m.tick).to.equal(1);
    expect((bookMetrics([[10, 1], [9.5, 1]], [[11, 1]], 1) as BookMetrics).tick).to.equal(0.5);
    expect((bookMetrics([[1, 1]], [[2, 1]], 1) as BookMetrics).tick).to.equal(null);
  });

  it('skips an empty side or a crossed book; a locked one is kept, its spread 0 and its best prices at 0 bps', () => {
    expect(bookMetrics([], [[1, 1]], 1)).to.equal('empty-side');
    expect(bookMetrics([[1, 0]], [[2, 1]], 1)).to.equal('empty-side');
    expect(bookMetrics([[2.1, 1]], [[2, 1]], 1)).to.equal('crossed');
    const locked = bookMetrics([[2, 1], [1.9, 1]], [[2, 3], [2.1, 1]], 1) as BookMetrics;
    expect(locked).to.include({ mid: 2, spreadAbs: 0, spreadBps: 0 });
    expect([locked.bidDepth![0], locked.askDepth![0], locked.bidCount[0], locked.askCount[0]]).to.deep.equal([2, 6, 1, 1]);
  });

  it('gives the same results into reused arrays, book after book (as the processor reuses them)', () => {
    const books: [Level[], Level[], number | null][] = [
      [bids, asks, 1],
      [bids, asks, null], // leaves the depth arrays alone: the next book must not see them
      [[[100, 1]], [[100.2, 1]], 50_000],
      [[[10, 1], [9.5, 1], [9.5, 2]], [[11, 1]], 0.5],
      [bids, asks, 1],
    ];
    const arrays = bookMetricsArrays();
    const reused = new BookMinute();
    const fresh = new BookMinute();
    books.forEach(([b, a, rate], i) => {
      const expected = bookMetrics(b, a, rate) as BookMetrics;
      const m = bookMetrics(b, a, rate, arrays) as BookMetrics;
      expect(m, `book ${i}`).to.deep.equal(expected);
      reused.add(m, i);
      fresh.add(expected, i);
    });
    expect(reused.row()).to.deep.equal(fresh.row());
  });

  it('level names carry no trailing zeros', () => {
    expect(LEVELS_BPS.map(levelName).slice(0, 6)).to.deep.equal(['0', '0.05', '0.1', '0.15', '0.25', '0.5']);
    expect(levelName(500)).to.equal('500');
  });
});

describe('a book minute', () => {
  it('means, last top of book, max spread and min depth over its snapshots', () => {
    const acc = new BookMinute();
    const a = bookMetrics(bids, asks, 1) as BookMetrics;
    const b = bookMetrics([[100, 1]], [[100.2, 1]], 1) as BookMetrics;
    acc.add(b, 2000);
    acc.add(a, 1000); // out of order: still the first
    const row = acc.row();
    expect(row.samples).to.equal(2);
    expect(row.mid).to.be.closeTo((a.mid + b.mid) / 2, 1e-12);
    // The minute's mid, dated by its first and last snapshot: a window's price change is from minute mids.
    expect(row.first_mid).to.deep.equal([1000, row.mid]);
    expect(row.last_mid).to.deep.equal([2000, row.mid]);
    expect(row.top).to.deep.equal([2000, 100, 1, 100.2, 1]);
    expect(row.spread_bps_max).to.equal(Math.max(a.spreadBps, b.spreadBps));
    expect(row.bid_depth[24]).to.be.closeTo((a.bidDepth![24]! + b.bidDepth![24]!) / 2, 1e-9);
    expect(row.min_depth[24]).to.equal(Math.min(a.bidDepth![24]!, a.askDepth![24]!, b.bidDepth![24]!, b.askDepth![24]!));
    expect(row.slippage_buy[0]).to.be.closeTo((a.slippageBuy[0]! + b.slippageBuy[0]!) / 2, 1e-9);
    expect(row.slippage_buy[2]).to.equal(a.slippageBuy[2]); // only the first book holds 10,000 USD of asks
    expect(row.slippage_buy[3]).to.equal(null); // neither holds 50,000
  });

  it('has no min depth when a snapshot had no USD rate', () => {
    const acc = new BookMinute();
    acc.add(bookMetrics(bids, asks, 1) as BookMetrics, 1);
    acc.add(bookMetrics(bids, asks, null) as BookMetrics, 2);
    const row = acc.row();
    expect(row.min_depth).to.deep.equal([]);
    expect(row.depth_samples).to.equal(1);
  });
});
