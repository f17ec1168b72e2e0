// Metrics of one order-book snapshot (addendum section 4): functions of the levels alone.
import type { Level } from '../../schemas/index.ts';
import { LEVELS_BPS, SLIPPAGE_SIZES_USD } from '../../domain/market/facts.ts';

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
  /** The mid in USD (mid x the quote's USD rate); null when the rate is unknown. */
  midUsd: number | null;
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

/** The arrays a result is written into. */
export interface BookMetricsArrays {
  bidDepth: number[];
  askDepth: number[];
  bidCount: number[];
  askCount: number[];
  slippageBuy: (number | null)[];
  slippageSell: (number | null)[];
}

const L = LEVELS_BPS.length;
const S = SLIPPAGE_SIZES_USD.length;
// Each level's price bound as a fraction of mid: the same doubles as mid * (1 -/+ bps / 1e4).
const BID_BOUND = LEVELS_BPS.map((l) => 1 - l / 1e4);
const ASK_BOUND = LEVELS_BPS.map((l) => 1 + l / 1e4);

/** Arrays for one result; a caller that keeps no result past the next call can reuse them. */
export function bookMetricsArrays(): BookMetricsArrays {
  const levels = () => new Array<number>(L).fill(0);
  const sizes = () => new Array<number | null>(S).fill(null);
  return { bidDepth: levels(), askDepth: levels(), bidCount: levels(), askCount: levels(), slippageBuy: sizes(), slippageSell: sizes() };
}

/**
 * The smallest positive step between adjacent levels when every level has a positive
 * amount and they are best first (the common case: one pass checks and measures); -1 otherwise.
 */
function tidyStep(levels: Level[], descending: boolean): number {
  let tick = Infinity;
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i]!;
    if (!(l[1] > 0)) return -1;
    if (i > 0) {
      const prev = levels[i - 1]![0];
      if (descending ? !(prev >= l[0]) : !(prev <= l[0])) return -1;
      const step = Math.abs(prev - l[0]);
      if (step > 0 && step < tick) tick = step;
    }
  }
  return tick;
}

/** Levels with a positive amount, best first. Feeds do not all sort, so sort a copy. */
function sorted(levels: Level[], descending: boolean): Level[] {
  const out = levels.filter((l) => l[1] > 0);
  out.sort((a, b) => (descending ? b[0] - a[0] : a[0] - b[0]));
  return out;
}

/** Why a book with these sides (positive amounts, best first) has no metrics; undefined when it has. */
function skipOfSorted(bids: Level[], asks: Level[]): BookSkip | undefined {
  if (bids.length === 0 || asks.length === 0) return 'empty-side';
  // Crossed is a bid above the ask; a locked book (equal best prices) has a mid and a spread of 0.
  return bids[0]![0] > asks[0]![0] ? 'crossed' : undefined;
}

/** Why bookMetrics would skip the book whatever its USD rate (its sides as sent); undefined when it would not. */
export function bookSkipOf(rawBids: Level[], rawAsks: Level[]): BookSkip | undefined {
  return skipOfSorted(tidyStep(rawBids, true) < 0 ? sorted(rawBids, true) : rawBids, tidyStep(rawAsks, false) < 0 ? sorted(rawAsks, false) : rawAsks);
}

/**
 * All per-snapshot metrics. `usdRate` converts the quote currency to USD (1 for USD and
 * stablecoins); null when unknown, which makes USD values null. The result's arrays are
 * `into`'s, new ones unless given.
 */
export function bookMetrics(rawBids: Level[], rawAsks: Level[], usdRate: number | null, into: BookMetricsArrays = bookMetricsArrays()): BookMetrics | BookSkip {
  let bidStep = tidyStep(rawBids, true);
  let askStep = tidyStep(rawAsks, false);
  const bids = bidStep < 0 ? sorted(rawBids, true) : rawBids;
  const asks = askStep < 0 ? sorted(rawAsks, false) : rawAsks;
  const skipped = skipOfSorted(bids, asks);
  if (skipped) return skipped;
  const bestBid = bids[0]![0];
  const bestAsk = asks[0]![0];
  const mid = (bestBid + bestAsk) / 2;
  const spreadAbs = bestAsk - bestBid;
  // A side that had to be sorted has its steps taken from the sorted copy.
  if (bidStep < 0) bidStep = smallestStep(bids);
  if (askStep < 0) askStep = smallestStep(asks);
  const tick = Math.min(bidStep, askStep);

  // One pass per side: levels are best first and the bounds widen with L.
  sweep(bids, true, mid, usdRate, into.bidCount, into.bidDepth);
  sweep(asks, false, mid, usdRate, into.askCount, into.askDepth);
  slippage(asks, mid, usdRate, 1, into.slippageBuy);
  slippage(bids, mid, usdRate, -1, into.slippageSell);

  return {
    bestBid,
    bestBidAmount: bids[0]![1],
    bestAsk,
    bestAskAmount: asks[0]![1],
    mid,
    midUsd: usdRate === null ? null : mid * usdRate,
    spreadAbs,
    spreadBps: (spreadAbs / mid) * 1e4,
    tick: tick === Infinity ? null : tick,
    bidDepth: usdRate === null ? null : into.bidDepth,
    askDepth: usdRate === null ? null : into.askDepth,
    bidCount: into.bidCount,
    askCount: into.askCount,
    slippageBuy: into.slippageBuy,
    slippageSell: into.slippageSell,
  };
}

/** Count and USD depth (when the rate is known) of the levels within each level of L. */
function sweep(levels: Level[], bid: boolean, mid: number, usdRate: number | null, count: number[], depth: number[]): void {
  const bound = bid ? BID_BOUND : ASK_BOUND;
  let j = 0;
  let cumCount = 0;
  let cumQuote = 0;
  for (let i = 0; i < L; i++) {
    const limit = mid * bound[i]!;
    for (; j < levels.length; j++) {
      const price = levels[j]![0];
      if (bid ? !(price >= limit) : !(price <= limit)) break;
      cumCount++;
      cumQuote += price * levels[j]![1];
    }
    count[i] = cumCount;
    if (usdRate !== null) depth[i] = cumQuote * usdRate;
  }
}

/** The smallest positive step between adjacent levels of a side; Infinity with none. */
function smallestStep(side: Level[]): number {
  let tick = Infinity;
  for (let i = 1; i < side.length; i++) {
    const step = Math.abs(side[i - 1]![0] - side[i]![0]);
    if (step > 0 && step < tick) tick = step;
  }
  return tick;
}

/** Walks the side best first until each size (USD) is filled; direction 1 buys, -1 sells. */
function slippage(levels: Level[], mid: number, usdRate: number | null, direction: 1 | -1, out: (number | null)[]): void {
  let k = 0;
  if (usdRate !== null && usdRate > 0) {
    let filledQuote = 0;
    let filledBase = 0;
    for (let j = 0; j < levels.length && k < S; j++) {
      const price = levels[j]![0];
      const amount = levels[j]![1];
      const levelQuote = price * amount;
      // Fill as many sizes as this level completes.
      while (k < S && (filledQuote + levelQuote) * usdRate >= SLIPPAGE_SIZES_USD[k]!) {
        const targetQuote = SLIPPAGE_SIZES_USD[k]! / usdRate;
        const base = filledBase + (targetQuote - filledQuote) / price;
        const avg = targetQuote / base;
        out[k] = direction === 1 ? (avg / mid - 1) * 1e4 : (1 - avg / mid) * 1e4;
        k++;
      }
      filledQuote += levelQuote;
      filledBase += amount;
    }
  }
  for (; k < S; k++) out[k] = null;
}
