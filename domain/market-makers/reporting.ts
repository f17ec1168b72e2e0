// How a market maker computes what it reports, so that an honest report equals the trusted
// value the reconciliation compares it with (docs/market-makers.md, "Reporting so that the
// reconciliation agrees"). The reconciliation and the demo's market makers
// (ingest/synthetic/market-makers.ts) both take the covered minutes from here.
//
// Trusted depth at L (addendum section 4) is, per wallet and minute, the mean over its
// order snapshots of the USD value of its levels within L of the public book's mean mid of
// that minute; over a bucket, the mean over the minutes with orders. A report of a bucket
// covers the bucket's minutes that ended at least the service's sealing delay (its
// lateness and a minute) before the push: the service has written every one of those
// minutes by the time it reads the push, and none after them is compared.
import { LEVELS_BPS } from '../market/facts.ts';
import { REPORTED_INTERVAL_MS, type ReportedInterval } from './reported.ts';
import { MINUTE_MS } from '../../lib/time.ts';

/** The end of the last minute a push at `pushedAt` covers: minutes ending at or before it (epoch ms). */
export function reportCut(pushedAt: number, latenessMs: number): number {
  return Math.floor((pushedAt - latenessMs - MINUTE_MS) / MINUTE_MS) * MINUTE_MS;
}

/** The minutes [from, to) of bucket `start` that a push at `pushedAt` covers; undefined when none. */
export function coveredMinutes(interval: ReportedInterval, start: number, pushedAt: number, latenessMs: number): [number, number] | undefined {
  const to = Math.min(start + REPORTED_INTERVAL_MS[interval], reportCut(pushedAt, latenessMs));
  return to > start ? [start, to] : undefined;
}

/**
 * The bucket of each interval a push at `pushedAt` should carry: the one holding the last
 * covered minute. Pushed at least once a minute, every bucket is last pushed once all its
 * minutes are covered.
 */
export function bucketsToReport(pushedAt: number, latenessMs: number): { interval: ReportedInterval; start: number }[] {
  const last = reportCut(pushedAt, latenessMs) - MINUTE_MS;
  return (['5m', '1h', '1d'] as const).map((interval) => ({ interval, start: Math.floor(last / REPORTED_INTERVAL_MS[interval]) * REPORTED_INTERVAL_MS[interval] }));
}

/** One minute of one wallet's own orders on a pair, as the market maker tallies it. */
export interface OwnMinute {
  /** Minute start, epoch ms. */
  start: number;
  /** Snapshots of its open orders in the minute. */
  snapshots: number;
  /** USD value of each price level of its bids (asks) summed over those snapshots. */
  bids: ReadonlyMap<number, number>;
  asks: ReadonlyMap<number, number>;
  /** The public book's mean mid over the minute's snapshots (each (best bid + best ask) / 2, one-sided and crossed snapshots skipped); undefined when the book had none. */
  mid: number | undefined;
  /** USD value of its fills in the minute. */
  volume: number;
}

export interface ReportValues {
  /** USD sum of fills over the covered minutes. */
  volume: number;
  /** Depth at each level of LEVELS_BPS: the mean over covered minutes with orders and a public mid; null when there are none. */
  bid: (number | null)[];
  ask: (number | null)[];
}

/** A wallet's depth at each level in one minute: its levels within L of the minute's mid, averaged over its snapshots. */
export function minuteDepth(m: OwnMinute & { mid: number }, side: 'bid' | 'ask'): number[] {
  const levels = side === 'bid' ? m.bids : m.asks;
  return LEVELS_BPS.map((l) => {
    const bound = side === 'bid' ? m.mid * (1 - l / 10_000) : m.mid * (1 + l / 10_000);
    let usd = 0;
    for (const [price, value] of levels) if (side === 'bid' ? price >= bound : price <= bound) usd += value;
    return usd / m.snapshots;
  });
}

/**
 * What a market maker reports for one pair and bucket at `pushedAt`, from each of its
 * wallets' minutes on the pair: volume the sum of fills, depth at L each wallet's mean
 * over its minutes with orders, the wallets added together. Undefined when the push covers
 * none of the bucket's minutes.
 */
export function reportOf(wallets: readonly (readonly OwnMinute[])[], interval: ReportedInterval, start: number, pushedAt: number, latenessMs: number): ReportValues | undefined {
  const range = coveredMinutes(interval, start, pushedAt, latenessMs);
  if (!range) return undefined;
  const out: ReportValues = { volume: 0, bid: LEVELS_BPS.map(() => null), ask: LEVELS_BPS.map(() => null) };
  const add = (a: number | null, b: number) => (a === null ? b : a + b);
  for (const minutes of wallets) {
    const covered = minutes.filter((m) => m.start >= range[0] && m.start + MINUTE_MS <= range[1]);
    for (const m of covered) out.volume += m.volume;
    const quoted = covered.filter((m): m is OwnMinute & { mid: number } => m.snapshots > 0 && m.mid !== undefined);
    if (quoted.length === 0) continue;
    for (const side of ['bid', 'ask'] as const) {
      const sums = LEVELS_BPS.map(() => 0);
      for (const m of quoted) minuteDepth(m, side).forEach((v, i) => (sums[i]! += v));
      out[side] = out[side].map((v, i) => add(v, sums[i]! / quoted.length));
    }
  }
  return out;
}
