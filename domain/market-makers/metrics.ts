// What the market-maker endpoints read: trusted partials per wallet, pair and bucket (the
// trusted families, read like the market's), and reported values per organization, pair,
// interval and bucket. Every value is bound.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Interval } from '../market/facts.ts';
import { MM_FAMILIES, type TrustedDepthPartial, type TrustedVolumePartial } from '../market/families/index.ts';
import { familyPartialsSql } from '../market/repositories/partials.ts';
import { bucketOf, type MarketQuery } from '../market/repositories/stored-rows.ts';
import type { Range } from '../market/window.ts';

/** The intervals market makers report at, coarsest first. */
export const REPORTED_INTERVALS = ['1d', '1h', '5m'] as const;
export type ReportedInterval = (typeof REPORTED_INTERVALS)[number];

export interface ReportedQuery {
  /** (organization, exchange, pair) whose values may be read. */
  keys: readonly { organization: string; exchange: string; pair: string }[];
  metrics: readonly string[];
  /** The window's ranges: a value counts when its bucket start lies in one. */
  ranges: readonly Range[];
  /** Bucketed by this interval (values of that interval only); `a`: one bucket per reported interval. */
  interval: Exclude<Interval, 'c'>;
  zone: string;
}

/** Reported values of one organization, pair, reported interval and bucket: sums and counts per metric. */
export interface ReportedBucket {
  organization: string;
  asset: string;
  exchange: string;
  pair: string;
  interval: ReportedInterval;
  b: number;
  sums: Map<string, number>;
  counts: Map<string, number>;
}

export class MarketMakerMetrics {
  constructor(private readonly ch: ClickHouse) {}

  /** Trusted depth and volume per wallet, pair and bucket, of these wallets only. */
  async trusted(q: MarketQuery, wallets: readonly number[]): Promise<{ depth: TrustedDepthPartial[]; volume: TrustedVolumePartial[] }> {
    if (q.pairs.length === 0 || wallets.length === 0) return { depth: [], volume: [] };
    const where = { text: 'wallet_id IN {wallets:Array(UInt64)}', params: { wallets: [...wallets] } };
    const read = async <P extends { wallet_id: number; b: number }>(sql: ReturnType<typeof familyPartialsSql>): Promise<P[]> => {
      if (!sql) return [];
      const rows = await this.ch.query<P>(sql.text, sql.params);
      for (const r of rows) {
        r.b = Number(r.b);
        r.wallet_id = Number(r.wallet_id);
      }
      return rows;
    };
    const [depth, volume] = await Promise.all([
      read<TrustedDepthPartial>(familyPartialsSql(MM_FAMILIES.trustedDepth, q, where)),
      read<TrustedVolumePartial>(familyPartialsSql(MM_FAMILIES.trustedVolume, q, where)),
    ]);
    for (const v of volume) {
      v.fills = Number(v.fills);
      v.usd_fills = Number(v.usd_fills);
    }
    for (const d of depth) d.minutes = Number(d.minutes);
    return { depth, volume };
  }

  /** Reported values in the window, per organization, pair, reported interval and bucket. */
  async reported(q: ReportedQuery): Promise<ReportedBucket[]> {
    if (q.keys.length === 0 || q.metrics.length === 0 || q.ranges.length === 0) return [];
    const intervals = q.interval === 'a' ? [...REPORTED_INTERVALS] : [q.interval];
    const params: Record<string, unknown> = {
      keys: q.keys.map((k) => new TupleParam([k.organization, k.exchange, k.pair])),
      metrics: [...q.metrics],
      intervals,
      tz: q.zone,
    };
    const ranges = q.ranges.map((r, i) => {
      params[`f${i}`] = Math.floor(r[0] / 1000);
      params[`t${i}`] = Math.ceil(r[1] / 1000);
      return `(timestamp >= toDateTime({f${i}:UInt32}, 'UTC') AND timestamp < toDateTime({t${i}:UInt32}, 'UTC'))`;
    });
    const bucket = q.interval === 'a' ? '0' : bucketOf(q.interval);
    const rows = await this.ch.query<{
      organization: string;
      asset: string;
      exchange: string;
      pair: string;
      interval: ReportedInterval;
      b: number;
      sums: [string[], number[]];
      counts: [string[], number[]];
    }>(
      `WITH timestamp AS t
       SELECT organization, any(asset) AS asset, exchange, pair, toString(\`interval\`) AS \`interval\`, ${bucket} AS b,
         sumMap([metric], [value]) AS sums, sumMap([metric], [toUInt64(1)]) AS counts
       FROM mm_reported FINAL
       WHERE (organization, exchange, pair) IN {keys:Array(Tuple(String, String, String))}
         AND metric IN {metrics:Array(String)} AND toString(\`interval\`) IN {intervals:Array(String)}
         AND (${ranges.join(' OR ')})
       GROUP BY organization, exchange, pair, \`interval\`, b`,
      params,
    );
    return rows.map((r) => ({
      organization: r.organization,
      asset: r.asset,
      exchange: r.exchange,
      pair: r.pair,
      interval: r.interval,
      b: Number(r.b),
      sums: new Map(r.sums[0].map((m, i) => [m, Number(r.sums[1][i])])),
      counts: new Map(r.counts[0].map((m, i) => [m, Number(r.counts[1][i])])),
    }));
  }
}
