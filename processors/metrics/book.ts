// Metrics of one order-book snapshot (addendum section 4). Pure functions of the levels.
import type { Level } from '../../schemas/index.ts';
import { LEVELS_BPS, SLIPPAGE_SIZES_USD } from './levels.ts';

export interface TopOfBook {
  bestBid: number;
  bestBidAmount: number;
  bestAsk: number;
  bestAskAmount: number;
  mid: number;
  spreadAbs: number;
  spreadBps: number;
}

export interface BookMetrics extends TopOfBook {
  /** Smallest positive step between adjacent price levels on either side; null with one level a side. */
  tick: number | null;
  /** USD depth within each level of L, or null when the quote's USD rate is unknown. */
  bidDepth: number[] | null;
  askDepth: number[] | null;
  bidCount: number[];
  askCount: number[];
  /** bps paid over mid to buy / sell each slippage size; null when the book holds less (or no USD rate). */
  slippageBuy: (number | null)[];
  slippageSell: (number | null)[];
}

export type BookSkip = 'empty-side' | 'crossed';

/** Levels with a positive amount, best first. Feeds do not all sort, so check and sort. */
function clean(levels: Level[], descending: boolean): Level[] {
  // The common case, every level positive and in order, needs no copy (hot path).
  let tidy = true;
  for (let i = 0; i < levels.length && tidy; i++) {
    const l = levels[i]!;
    if (!(l[1] > 0)) tidy = false;
    else if (i > 0) tidy = descending ? levels[i - 1]![0] >= l[0] : levels[i - 1]![0] <= l[0];
  }
  if (tidy) return levels;
  const out = levels.filter((l) => l[1] > 0);
  out.sort((a, b) => (descending ? b[0] - a[0] : a[0] - b[0]));
  return out;
}

/**
 * All per-snapshot metrics. `usdRate` converts the quote currency to USD (1 for USD and
 * stablecoins); null when unknown, which makes USD values null.
 */
export function bookMetrics(rawBids: Level[], rawAsks: Level[], usdRate: number | null): BookMetrics | BookSkip {
  const bids = clean(rawBids, true);
  const asks = clean(rawAsks, false);
  if (bids.length === 0 || asks.length === 0) return 'empty-side';
  const [bestBid, bestBidAmount] = bids[0]!;
  const [bestAsk, bestAskAmount] = asks[0]!;
  if (bestBid >= bestAsk) return 'crossed';
  const mid = (bestBid + bestAsk) / 2;
  const spreadAbs = bestAsk - bestBid;

  const n = LEVELS_BPS.length;
  const bidCount = new Array<number>(n).fill(0);
  const askCount = new Array<number>(n).fill(0);
  const bidQuote = new Array<number>(n).fill(0);
  const askQuote = new Array<number>(n).fill(0);
  // One pass per side: levels are best first and thresholds widen with L.
  sweep(bids, (price, i) => price >= mid * (1 - LEVELS_BPS[i]! / 1e4), bidCount, bidQuote);
  sweep(asks, (price, i) => price <= mid * (1 + LEVELS_BPS[i]! / 1e4), askCount, askQuote);

  return {
    bestBid,
    bestBidAmount,
    bestAsk,
    bestAskAmount,
    mid,
    spreadAbs,
    spreadBps: (spreadAbs / mid) * 1e4,
    tick: minStep(bids, asks),
    bidDepth: usdRate === null ? null : bidQuote.map((q) => q * usdRate),
    askDepth: usdRate === null ? null : askQuote.map((q) => q * usdRate),
    bidCount,
    askCount,
    slippageBuy: slippage(asks, mid, usdRate, 1),
    slippageSell: slippage(bids, mid, usdRate, -1),
  };
}

function sweep(levels: Level[], within: (price: number, levelIdx: number) => boolean, count: number[], quote: number[]): void {
  let j = 0;
  let cumCount = 0;
  let cumQuote = 0;
  for (let i = 0; i < LEVELS_BPS.length; i++) {
    while (j < levels.length && within(levels[j]![0], i)) {
      cumCount++;
      cumQuote += levels[j]![0] * levels[j]![1];
      j++;
    }
    count[i] = cumCount;
    quote[i] = cumQuote;
  }
}

function minStep(bids: Level[], asks: Level[]): number | null {
  let tick = Infinity;
  for (const side of [bids, asks]) {
    for (let i = 1; i < side.length; i++) {
      const step = Math.abs(side[i - 1]![0] - side[i]![0]);
      if (step > 0 && step < tick) tick = step;
    }
  }
  return tick === Infinity ? null : tick;
}

/** Walks the side best first until each size (USD) is filled; direction 1 buys, -1 sells. */
function slippage(levels: Level[], mid: number, usdRate: number | null, direction: 1 | -1): (number | null)[] {
  const out = new Array<number | null>(SLIPPAGE_SIZES_USD.length).fill(null);
  if (usdRate === null || usdRate <= 0) return out;
  let k = 0;
  let filledQuote = 0;
  let filledBase = 0;
  for (const [price, amount] of levels) {
    const levelQuote = price * amount;
    // Fill as many sizes as this level completes.
    while (k < SLIPPAGE_SIZES_USD.length && (filledQuote + levelQuote) * usdRate >= SLIPPAGE_SIZES_USD[k]!) {
      const targetQuote = SLIPPAGE_SIZES_USD[k]! / usdRate;
      const base = filledBase + (targetQuote - filledQuote) / price;
      const avg = targetQuote / base;
      out[k] = direction === 1 ? (avg / mid - 1) * 1e4 : (1 - avg / mid) * 1e4;
      k++;
    }
    if (k === SLIPPAGE_SIZES_USD.length) break;
    filledQuote += levelQuote;
    filledBase += amount;
  }
  return out;
}
