// One pair's minute of order-book snapshots (addendum section 4): depth, counts, spread,
// mid and slippage are means over the snapshots; top of book is the last; the maximum
// spread and the minimum depth at each level decide spread-up and depth-up flags. A
// window's price change is from its first minute's mid to its last's (minute values, as
// every figure over a window): first_mid and last_mid hold the minute's mid, dated by its
// first and last snapshot, so that the earliest and latest of them pick those minutes.
import type { BookMetrics } from '../metrics/book.ts';
import { LEVELS_BPS, SLIPPAGE_SIZES_USD } from '../../domain/market/facts.ts';
import type { Accumulator } from '../shell/minute-windows.ts';

export interface BookMinuteRow {
  samples: number;
  mid: number;
  /** Mean mid in USD over the snapshots with a USD rate (an asset's price: domain/market/prices.ts); null with none. */
  mid_usd: number | null;
  first_mid: [number, number];
  last_mid: [number, number];
  spread_abs: number;
  spread_bps: number;
  spread_bps_max: number;
  top: [number, number, number, number, number];
  tick: number | null;
  depth_samples: number;
  bid_depth: number[];
  ask_depth: number[];
  bid_count: number[];
  ask_count: number[];
  /** Minimum over snapshots of min(bid, ask) depth per level; empty when any snapshot had no USD rate. */
  min_depth: number[];
  slippage_buy: (number | null)[];
  slippage_sell: (number | null)[];
}

const L = LEVELS_BPS.length;
const S = SLIPPAGE_SIZES_USD.length;

export class BookMinute implements Accumulator<BookMetrics, BookMinuteRow> {
  private samples = 0;
  private midSum = 0;
  private usdMidSum = 0;
  private usdMids = 0;
  // First / last mid and the last top of book as plain fields, built into the row's
  // tuples at the end: no arrays per snapshot.
  private firstTs = Infinity;
  private lastTs = -Infinity;
  private topBid = 0;
  private topBidAmount = 0;
  private topAsk = 0;
  private topAskAmount = 0;
  private spreadAbsSum = 0;
  private spreadBpsSum = 0;
  private spreadMax = -Infinity;
  private tick = Infinity;
  private depthSamples = 0;
  private allUsd = true;
  // Plain arrays: a typed array each would cost an off-heap buffer per minute and pair.
  private readonly bidDepth = filled(L, 0);
  private readonly askDepth = filled(L, 0);
  private readonly bidCount = filled(L, 0);
  private readonly askCount = filled(L, 0);
  private readonly minDepth = filled(L, Infinity);
  private readonly slipBuy = filled(S, 0);
  private readonly slipBuyN = filled(S, 0);
  private readonly slipSell = filled(S, 0);
  private readonly slipSellN = filled(S, 0);

  add(m: BookMetrics, ts: number): void {
    this.samples++;
    this.midSum += m.mid;
    if (m.midUsd !== null) {
      this.usdMidSum += m.midUsd;
      this.usdMids++;
    }
    if (ts < this.firstTs) this.firstTs = ts;
    if (ts >= this.lastTs) {
      this.lastTs = ts;
      this.topBid = m.bestBid;
      this.topBidAmount = m.bestBidAmount;
      this.topAsk = m.bestAsk;
      this.topAskAmount = m.bestAskAmount;
    }
    this.spreadAbsSum += m.spreadAbs;
    this.spreadBpsSum += m.spreadBps;
    if (m.spreadBps > this.spreadMax) this.spreadMax = m.spreadBps;
    if (m.tick !== null && m.tick < this.tick) this.tick = m.tick;
    for (let i = 0; i < L; i++) {
      this.bidCount[i]! += m.bidCount[i]!;
      this.askCount[i]! += m.askCount[i]!;
    }
    if (m.bidDepth && m.askDepth) {
      this.depthSamples++;
      for (let i = 0; i < L; i++) {
        const b = m.bidDepth[i]!;
        const a = m.askDepth[i]!;
        this.bidDepth[i]! += b;
        this.askDepth[i]! += a;
        const low = b < a ? b : a;
        if (low < this.minDepth[i]!) this.minDepth[i] = low;
      }
    } else {
      this.allUsd = false;
    }
    for (let k = 0; k < S; k++) {
      const b = m.slippageBuy[k];
      if (b !== null && b !== undefined) {
        this.slipBuy[k]! += b;
        this.slipBuyN[k]!++;
      }
      const s = m.slippageSell[k];
      if (s !== null && s !== undefined) {
        this.slipSell[k]! += s;
        this.slipSellN[k]!++;
      }
    }
  }

  row(): BookMinuteRow {
    const n = this.samples;
    const d = this.depthSamples;
    const mid = this.midSum / n;
    return {
      samples: n,
      mid,
      mid_usd: this.usdMids > 0 ? this.usdMidSum / this.usdMids : null,
      first_mid: [this.firstTs, mid],
      last_mid: [this.lastTs, mid],
      spread_abs: this.spreadAbsSum / n,
      spread_bps: this.spreadBpsSum / n,
      spread_bps_max: this.spreadMax,
      top: [this.lastTs, this.topBid, this.topBidAmount, this.topAsk, this.topAskAmount],
      tick: this.tick === Infinity ? null : this.tick,
      depth_samples: d,
      bid_depth: mean(this.bidDepth, d),
      ask_depth: mean(this.askDepth, d),
      bid_count: mean(this.bidCount, n),
      ask_count: mean(this.askCount, n),
      min_depth: this.allUsd && d > 0 ? this.minDepth.slice() : [],
      slippage_buy: slippageMeans(this.slipBuy, this.slipBuyN),
      slippage_sell: slippageMeans(this.slipSell, this.slipSellN),
    };
  }
}

function filled(n: number, x: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(x);
  return out;
}

/** Each sum over `count`; none when nothing was counted. */
function mean(sums: number[], count: number): number[] {
  const out: number[] = [];
  if (count > 0) for (let i = 0; i < sums.length; i++) out.push(sums[i]! / count);
  return out;
}

/** Each size's mean over the snapshots that could fill it; null when none could. */
function slippageMeans(sums: number[], counts: number[]): (number | null)[] {
  const out: (number | null)[] = [];
  for (let k = 0; k < sums.length; k++) out.push(counts[k]! > 0 ? sums[k]! / counts[k]! : null);
  return out;
}
