// One pair's minute of order-book snapshots (addendum section 4): depth, counts, spread,
// mid and slippage are means over the snapshots; top of book is the last; the maximum
// spread and the minimum depth at each level decide spread-up and depth-up flags.
import type { BookMetrics } from '../metrics/book.ts';
import { LEVELS_BPS, SLIPPAGE_SIZES_USD } from '../metrics/levels.ts';
import type { Accumulator } from '../shell/minute-windows.ts';

export interface BookMinuteRow {
  samples: number;
  mid: number;
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
  private first: [number, number] = [Infinity, 0];
  private last: [number, number] = [-Infinity, 0];
  private spreadAbsSum = 0;
  private spreadBpsSum = 0;
  private spreadMax = -Infinity;
  private top: [number, number, number, number, number] = [-Infinity, 0, 0, 0, 0];
  private tick = Infinity;
  private depthSamples = 0;
  private allUsd = true;
  private readonly bidDepth = new Float64Array(L);
  private readonly askDepth = new Float64Array(L);
  private readonly bidCount = new Float64Array(L);
  private readonly askCount = new Float64Array(L);
  private readonly minDepth = new Float64Array(L).fill(Infinity);
  private readonly slipBuy = new Float64Array(S);
  private readonly slipBuyN = new Uint32Array(S);
  private readonly slipSell = new Float64Array(S);
  private readonly slipSellN = new Uint32Array(S);

  add(m: BookMetrics, ts: number): void {
    this.samples++;
    this.midSum += m.mid;
    if (ts < this.first[0]) this.first = [ts, m.mid];
    if (ts >= this.last[0]) this.last = [ts, m.mid];
    if (ts >= this.top[0]) this.top = [ts, m.bestBid, m.bestBidAmount, m.bestAsk, m.bestAskAmount];
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
    const mean = (sums: Float64Array, count: number) => (count > 0 ? Array.from(sums, (x) => x / count) : []);
    const slip = (sums: Float64Array, counts: Uint32Array) => Array.from(sums, (x, k) => (counts[k]! > 0 ? x / counts[k]! : null));
    return {
      samples: n,
      mid: this.midSum / n,
      first_mid: this.first,
      last_mid: this.last,
      spread_abs: this.spreadAbsSum / n,
      spread_bps: this.spreadBpsSum / n,
      spread_bps_max: this.spreadMax,
      top: this.top,
      tick: this.tick === Infinity ? null : this.tick,
      depth_samples: d,
      bid_depth: mean(this.bidDepth, d),
      ask_depth: mean(this.askDepth, d),
      bid_count: mean(this.bidCount, n),
      ask_count: mean(this.askCount, n),
      min_depth: this.allUsd && d > 0 ? Array.from(this.minDepth) : [],
      slippage_buy: slip(this.slipBuy, this.slipBuyN),
      slippage_sell: slip(this.slipSell, this.slipSellN),
    };
  }
}
