// A snapshot's metrics as numbers in a Float64Array, the form they cross threads in
// (processors/market/prepare.ts): copied in one piece, where objects would be cloned key
// by key. A missing value (no tick, no USD rate, a size the book cannot fill) is NaN,
// which no metric is.
import { LEVELS_BPS, SLIPPAGE_SIZES_USD } from '../../domain/market/facts.ts';
import { bookMetricsArrays, type BookMetrics } from '../metrics/book.ts';
import type { Packing } from '../market/windowed-pipeline.ts';

const L = LEVELS_BPS.length;
const S = SLIPPAGE_SIZES_USD.length;
const DEPTH = 9;
const BID_DEPTH = DEPTH;
const ASK_DEPTH = BID_DEPTH + L;
const BID_COUNT = ASK_DEPTH + L;
const ASK_COUNT = BID_COUNT + L;
const SLIP_BUY = ASK_COUNT + L;
const SLIP_SELL = SLIP_BUY + S;
const MID_USD = SLIP_SELL + S;

const orNaN = (x: number | null | undefined): number => (x === null || x === undefined ? NaN : x);
const orNull = (x: number): number | null => (Number.isNaN(x) ? null : x);

/** Packs BookMetrics; `read` fills one set of arrays, so its result lasts until the next read (as WindowSpec.compute's). */
export function bookPacking(): Packing<BookMetrics> {
  const arrays = bookMetricsArrays();
  const result: BookMetrics = { bestBid: 0, bestBidAmount: 0, bestAsk: 0, bestAskAmount: 0, mid: 0, midUsd: null, spreadAbs: 0, spreadBps: 0, tick: null, ...arrays };
  return {
    width: MID_USD + 1,
    write(m, out, at) {
      out[at] = m.bestBid;
      out[at + 1] = m.bestBidAmount;
      out[at + 2] = m.bestAsk;
      out[at + 3] = m.bestAskAmount;
      out[at + 4] = m.mid;
      out[at + 5] = m.spreadAbs;
      out[at + 6] = m.spreadBps;
      out[at + 7] = orNaN(m.tick);
      out[at + 8] = m.bidDepth && m.askDepth ? 1 : 0;
      for (let i = 0; i < L; i++) {
        out[at + BID_DEPTH + i] = m.bidDepth?.[i] ?? NaN;
        out[at + ASK_DEPTH + i] = m.askDepth?.[i] ?? NaN;
        out[at + BID_COUNT + i] = m.bidCount[i]!;
        out[at + ASK_COUNT + i] = m.askCount[i]!;
      }
      for (let k = 0; k < S; k++) {
        out[at + SLIP_BUY + k] = orNaN(m.slippageBuy[k]);
        out[at + SLIP_SELL + k] = orNaN(m.slippageSell[k]);
      }
      out[at + MID_USD] = orNaN(m.midUsd);
    },
    read(from, at) {
      const depth = from[at + 8] === 1;
      for (let i = 0; i < L; i++) {
        arrays.bidDepth[i] = from[at + BID_DEPTH + i]!;
        arrays.askDepth[i] = from[at + ASK_DEPTH + i]!;
        arrays.bidCount[i] = from[at + BID_COUNT + i]!;
        arrays.askCount[i] = from[at + ASK_COUNT + i]!;
      }
      for (let k = 0; k < S; k++) {
        arrays.slippageBuy[k] = orNull(from[at + SLIP_BUY + k]!);
        arrays.slippageSell[k] = orNull(from[at + SLIP_SELL + k]!);
      }
      // One object for every read, as the arrays: no allocation per snapshot.
      result.bestBid = from[at]!;
      result.bestBidAmount = from[at + 1]!;
      result.bestAsk = from[at + 2]!;
      result.bestAskAmount = from[at + 3]!;
      result.mid = from[at + 4]!;
      result.midUsd = orNull(from[at + MID_USD]!);
      result.spreadAbs = from[at + 5]!;
      result.spreadBps = from[at + 6]!;
      result.tick = orNull(from[at + 7]!);
      result.bidDepth = depth ? arrays.bidDepth : null;
      result.askDepth = depth ? arrays.askDepth : null;
      return result;
    },
  };
}
