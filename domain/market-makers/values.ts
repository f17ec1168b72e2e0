// A market maker's values (addendum section 4), as every reader takes them: the
// market-maker endpoints, the reconciliation, the target evaluator and the RFQ track record.
// Trusted values per wallet (depth the mean over its minutes with orders, volume the USD sum
// of its fills), a market maker's wallets added together, trusted values shown instead of
// reported ones, a bucket's reported values, coverage of the whole market, and whether a
// report overstates what was measured.
import { mean, meanPacked } from '../market/values.ts';
import { REPORTED_INTERVALS, type ReportedInterval } from './reported.ts';
import { TwoKeyMap } from '../../lib/map-key.ts';
import type { Float64ArrayColumn } from '../../lib/native-columns.ts';

/** Volume and depth at some levels (null where unknown). */
export interface Values {
  volume: number | null;
  bid: (number | null)[];
  ask: (number | null)[];
}

/** A wallet's trusted depth aggregates over a bucket or window (the trusted-depth family). */
export interface TrustedDepthSums {
  minutes: number;
  bid_depth_sum: number[];
  ask_depth_sum: number[];
}

/** The keys of wallets' trusted rows read by column: `length` rows, each of a wallet, pair and bucket. */
export interface WalletKeyColumns {
  length: number;
  exchange: string[];
  pair: string[];
  wallet_id: Float64Array;
  /** Bucket start (epoch s). */
  b: Float64Array;
}

/**
 * Wallets' trusted depth aggregates per pair and bucket by column (the trusted-depth
 * family's partials as domain/market-makers/metrics.ts reads them): row i's sums at each
 * level from bid.offsets[i] (ask.offsets[i]), NaN for an unknown sum.
 */
export interface TrustedDepthColumns extends WalletKeyColumns {
  minutes: Float64Array;
  bid: Float64ArrayColumn;
  ask: Float64ArrayColumn;
}

/** Wallets' trusted volume aggregates per pair and bucket by column, as TrustedDepthColumns. */
export interface TrustedVolumeColumns extends WalletKeyColumns {
  fills: Float64Array;
  volume_usd: Float64Array;
  usd_fills: Float64Array;
}

/** A wallet's trusted volume aggregates over a bucket or window (the trusted-volume family). */
export interface TrustedVolumeSums {
  fills: number;
  volume_usd: number;
  /** Fills with a USD rate: none means volume is unknown. */
  usd_fills: number;
}

/** A wallet's trusted volume: 0 without fills, null when no fill had a USD rate. */
export function trustedVolume(v: TrustedVolumeSums | undefined): number | null {
  if (!v) return 0;
  const x = trustedVolumePacked(v.fills, v.volume_usd, v.usd_fills);
  return Number.isNaN(x) ? null : x;
}

/** trustedVolume of a wallet's sums, NaN for null. */
export function trustedVolumePacked(fills: number, volumeUsd: number, usdFills: number): number {
  if (fills === 0) return 0;
  return usdFills > 0 ? volumeUsd : NaN;
}

/** A wallet's trusted values at the levels of index `at`: depth the mean over its minutes with orders (null without), volume as trustedVolume. */
export function walletValues(d: TrustedDepthSums | undefined, v: TrustedVolumeSums | undefined, at: readonly number[]): Values {
  // Loops, not a closure per side: a month's summary takes 31,000 wallets' values.
  const bid: (number | null)[] = new Array<number | null>(at.length);
  const ask: (number | null)[] = new Array<number | null>(at.length);
  for (let k = 0; k < at.length; k++) {
    bid[k] = d ? mean(d.bid_depth_sum[at[k]!], d.minutes) : null;
    ask[k] = d ? mean(d.ask_depth_sum[at[k]!], d.minutes) : null;
  }
  return { volume: trustedVolume(v), bid, ask };
}

/**
 * Values packed in a row of numbers: volume, then bid and ask at each level (1 + 2 x levels
 * numbers), NaN where unknown (null). A month at `5m` is 40,000 wallets' values: rows of
 * one array, not two arrays and an object each, leave the collector nothing to do.
 */
export type PackedValues = Float64Array;

/** Values packed (PackedValues). */
export function packValues(v: Values): PackedValues {
  const n = v.bid.length;
  const out = new Float64Array(1 + 2 * n);
  out[0] = v.volume ?? NaN;
  for (let i = 0; i < n; i++) {
    out[1 + i] = v.bid[i] ?? NaN;
    out[1 + n + i] = v.ask[i] ?? NaN;
  }
  return out;
}

/** PackedValues of `levels` levels as Values (NaN as null). */
export function unpackValues(p: PackedValues, levels: number): Values {
  const known = (x: number) => (Number.isNaN(x) ? null : x);
  return { volume: known(p[0]!), bid: Array.from(p.subarray(1, 1 + levels), known), ask: Array.from(p.subarray(1 + levels, 1 + 2 * levels), known) };
}

/**
 * walletValues packed (PackedValues' order, a row of 1 + 2n numbers at `at` of `out`),
 * written as a wallet's rows of a bucket are found: `empty` before any (no fill: volume 0;
 * no depth), then its depth row (its first `n` levels: the levels read) and its volume row.
 */
export const packedWallet = {
  empty(n: number, out: Float64Array, at: number): void {
    out[at] = 0;
    out.fill(NaN, at + 1, at + 1 + 2 * n);
  },
  /** Row `row` of the depth columns `d` (its first `n` levels). */
  depth(d: TrustedDepthColumns, row: number, n: number, out: Float64Array, at: number): void {
    const minutes = d.minutes[row]!;
    const bid = d.bid.offsets[row]!;
    const ask = d.ask.offsets[row]!;
    const bids = d.bid.values;
    const asks = d.ask.values;
    for (let i = 0; i < n; i++) {
      out[at + 1 + i] = meanPacked(bids[bid + i], minutes);
      out[at + 1 + n + i] = meanPacked(asks[ask + i], minutes);
    }
  },
  /** Row `row` of the volume columns `v`. */
  volume(v: TrustedVolumeColumns, row: number, out: Float64Array, at: number): void {
    out[at] = trustedVolumePacked(v.fills[row]!, v.volume_usd[row]!, v.usd_fills[row]!);
  },
};

interface WalletKey {
  wallet_id: number;
  exchange: string;
  pair: string;
  /** Bucket start, when the rows are bucketed. */
  b?: number;
}

/** Each wallet's values per pair (and bucket) from its depth and volume rows. */
export function walletValuesOf(
  depth: readonly (WalletKey & TrustedDepthSums)[],
  volume: readonly (WalletKey & TrustedVolumeSums)[],
  at: readonly number[],
): (Required<WalletKey> & { values: Values })[] {
  type Found = { r: WalletKey; d?: TrustedDepthSums; v?: TrustedVolumeSums };
  // By wallet, exchange, pair and bucket, in maps: no key text made per row (a month at 5m
  // is 67,000 rows of each). In the order first found.
  const byWallet = new Map<number, TwoKeyMap<string, string, Map<number, Found>>>();
  const found: Found[] = [];
  const slot = (r: WalletKey) => {
    let pairs = byWallet.get(r.wallet_id);
    if (!pairs) byWallet.set(r.wallet_id, (pairs = new TwoKeyMap()));
    let byB = pairs.get(r.exchange, r.pair);
    if (!byB) pairs.set(r.exchange, r.pair, (byB = new Map()));
    let x = byB.get(r.b ?? 0);
    if (!x) {
      byB.set(r.b ?? 0, (x = { r }));
      found.push(x);
    }
    return x;
  };
  for (const d of depth) slot(d).d = d;
  for (const v of volume) slot(v).v = v;
  return found.map(({ r, d, v }) => ({ wallet_id: r.wallet_id, exchange: r.exchange, pair: r.pair, b: r.b ?? 0, values: walletValues(d, v, at) }));
}

/** A market maker's wallets together: sums, null only where every wallet's value is. */
export function sumWallets(wallets: readonly Values[]): Values {
  const add = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);
  const first = wallets[0]!;
  const out: Values = { volume: first.volume, bid: [...first.bid], ask: [...first.ask] };
  for (const w of wallets.slice(1)) {
    out.volume = add(out.volume, w.volume);
    out.bid = out.bid.map((v, i) => add(v, w.bid[i] ?? null));
    out.ask = out.ask.map((v, i) => add(v, w.ask[i] ?? null));
  }
  return out;
}

/**
 * sumWallets over packed values (volume and depths, NaN where unknown): adds the `width`
 * numbers of `wallet` from `walletAt` into those of `sum` from `sumAt`. The reconciliation
 * packs a month of rows so, many rows to an array.
 */
export function addPackedWallet(sum: Float64Array, sumAt: number, wallet: Float64Array, walletAt: number, width: number): void {
  for (let j = 0; j < width; j++) {
    const a = sum[sumAt + j]!;
    const b = wallet[walletAt + j]!;
    sum[sumAt + j] = Number.isNaN(a) ? b : Number.isNaN(b) ? a : a + b;
  }
}

/**
 * What a bucket shows for a market maker: trusted values replace reported ones, one row per
 * wallet with trusted values; without any, the reported values; else nothing.
 */
export function shownValues<W, V>(trusted: readonly { wallet: W; values: V }[], reported: V | undefined): { wallet: W | undefined; values: V }[] {
  if (trusted.length > 0) return trusted.map((t) => ({ wallet: t.wallet, values: t.values }));
  return reported ? [{ wallet: undefined, values: reported }] : [];
}

/** A bucket's reported values at the levels named (`2`, `2_5`, ...): volume the sum of the reports, depth their mean. */
export function reportedValues(r: { sums: ReadonlyMap<string, number>; counts: ReadonlyMap<string, number> }, levelNames: readonly string[]): Values {
  const avg = (m: string) => mean(r.sums.get(m), r.counts.get(m) ?? 0);
  return {
    volume: r.sums.get('volume/volume') ?? null,
    bid: levelNames.map((l) => avg(`depth/bid_${l}bps`)),
    ask: levelNames.map((l) => avg(`depth/ask_${l}bps`)),
  };
}

/** Over a window read as one bucket (`a`): each market maker's values of the coarsest interval it reported on the pair. */
export function coarsestReported<R extends { organization: string; exchange: string; pair: string; interval: ReportedInterval }>(rows: readonly R[]): R[] {
  const k = (r: R) => `${r.organization}\u0000${r.exchange}\u0000${r.pair}`;
  const best = new Map<string, number>();
  for (const r of rows) best.set(k(r), Math.min(best.get(k(r)) ?? Infinity, REPORTED_INTERVALS.indexOf(r.interval)));
  return rows.filter((r) => best.get(k(r)) === REPORTED_INTERVALS.indexOf(r.interval));
}

/** 100 x the market maker's value / the whole market's, at most 100; null when either is unknown or the market had nothing. */
export function coverage(value: number | null, whole: number | null | undefined): number | null {
  const c = coveragePacked(value, whole);
  return Number.isNaN(c) ? null : c;
}

/** coverage, NaN where it is null (a value NaN too): the summary packs a million of them, none boxed. */
export function coveragePacked(value: number | null, whole: number | null | undefined): number {
  if (value === null || whole === null || whole === undefined || !(whole > 0)) return NaN;
  return Math.min(100, (100 * value) / whole);
}

/** A report counts as overstated above the measurement by more than this, unless the caller asks another. */
export const DEFAULT_TOLERANCE_PCT = 10;

/** Differences below this share of the measurement are rounding (the two sides sum in other orders). */
const ROUNDING = 1e-9;

/** The report's difference from the measurement, in percent of it; null when the measurement is 0 or either is unknown. */
export function differencePct(reported: number | null, trusted: number | null): number | null {
  if (reported === null || trusted === null) return null;
  const d = differencePctPacked(reported, trusted);
  return Number.isNaN(d) ? null : d;
}

/** differencePct of packed sides (NaN unknown), NaN where it is null: no number boxed per metric. */
export function differencePctPacked(reported: number, trusted: number): number {
  return trusted === 0 ? NaN : (100 * (reported - trusted)) / trusted;
}

/** Whether the report exceeds the measurement by more than the tolerance (any report above a measured 0 does). */
export function overstated(reported: number | null, trusted: number | null, tolerancePct: number = DEFAULT_TOLERANCE_PCT): boolean {
  return reported !== null && trusted !== null && overstatedPacked(reported, trusted, tolerancePct);
}

/** overstated of packed sides (NaN unknown: never overstated, as every comparison with NaN is false). */
export function overstatedPacked(reported: number, trusted: number, tolerancePct: number): boolean {
  return reported > trusted * (1 + tolerancePct / 100) + Math.abs(trusted) * ROUNDING && reported > trusted;
}

/** One metric compared over several reported buckets. */
export interface Compared {
  reported: number | null;
  trusted: number | null;
  /** Whether both sides cover the same buckets (only then is a difference shown and judged). */
  matched: boolean;
}

/** A side of one bucket, as the general case sums or averages it. */
function oneBucket(x: number | null, combine: 'sum' | 'mean'): number | null {
  if (x === null) return null;
  return combine === 'sum' ? 0 + x : (0 + x) / 1;
}

/** compareBuckets of one bucket, as every row but those of `a` has: the same sums without the lists. */
export function oneBucketCompared(reported: number | null, trusted: number | null, combine: 'sum' | 'mean'): Compared {
  return { reported: oneBucket(reported, combine), trusted: oneBucket(trusted, combine), matched: reported !== null && trusted !== null };
}

/** The three sides of compared metrics, packed: reported and trusted NaN where unknown, matched 1 or 0. */
export interface PackedCompared {
  reported: Float64Array;
  trusted: Float64Array;
  matched: Uint8Array;
}

/**
 * oneBucketCompared of every metric of one bucket, packed (NaN where unknown; the sum and
 * the mean of one value are the value), the trusted side from `trustedAt` of `trusted`,
 * written into `out` from `at`: a month's
 * reconciliation is a million and a half metrics, an object each cost more than the rest.
 */
export function oneBucketComparedPacked(reported: Float64Array, trusted: Float64Array, trustedAt: number, out: PackedCompared, at: number): void {
  for (let j = 0; j < reported.length; j++) {
    const r = reported[j]!;
    const t = trusted[trustedAt + j]!;
    out.reported[at + j] = 0 + r;
    out.trusted[at + j] = 0 + t;
    out.matched[at + j] = Number.isNaN(r) || Number.isNaN(t) ? 0 : 1;
  }
}

/**
 * One metric over several reported buckets, each with the trusted value of the minutes its
 * report covers: the two sides combined (volume summed, depth averaged) over the buckets
 * both have; when no bucket has both, each side over its own buckets, unmatched.
 */
export function compareBuckets(both: readonly { reported: number | null; trusted: number | null }[], combine: 'sum' | 'mean'): Compared {
  if (both.length === 1) return oneBucketCompared(both[0]!.reported, both[0]!.trusted, combine);
  const f = (xs: number[]) => {
    const s = xs.reduce((a, x) => a + x, 0);
    return combine === 'sum' ? s : s / xs.length;
  };
  const pairs = both.filter((x): x is { reported: number; trusted: number } => x.reported !== null && x.trusted !== null);
  if (pairs.length > 0) return { reported: f(pairs.map((x) => x.reported)), trusted: f(pairs.map((x) => x.trusted)), matched: true };
  const reported = both.flatMap((x) => (x.reported === null ? [] : [x.reported]));
  const trusted = both.flatMap((x) => (x.trusted === null ? [] : [x.trusted]));
  return { reported: reported.length > 0 ? f(reported) : null, trusted: trusted.length > 0 ? f(trusted) : null, matched: false };
}
