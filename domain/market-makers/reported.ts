// Writes of mm_reported (schemas/clickhouse/020_reported_metrics.sql): the values market
// makers push, one row per key and push, the latest push of a key winning on read (FINAL).
// The endpoints' reads live elsewhere; `latest` is the plain read the tests and checks use.
import crypto from 'node:crypto';
import type { ClickHouse } from '../../lib/clickhouse.ts';

export const REPORTED_INTERVALS = ['5m', '1h', '1d'] as const;
export type ReportedInterval = (typeof REPORTED_INTERVALS)[number];

/** Length of each interval in ms: a value's timestamp is a multiple of it (UTC). */
export const REPORTED_INTERVAL_MS: Record<ReportedInterval, number> = { '5m': 300_000, '1h': 3_600_000, '1d': 86_400_000 };

export interface ReportedRow {
  organization: string;
  asset: string;
  exchange: string;
  pair: string;
  metric: string;
  interval: ReportedInterval;
  /** Bucket start, epoch ms. */
  timestamp: number;
  value: number;
  /** When the value was pushed (the Kafka message's timestamp), epoch ms: the row's version. */
  pushedAt: number;
}

/** The key a push replaces the value of (addendum section 3). */
export function reportedKey(r: Pick<ReportedRow, 'organization' | 'asset' | 'exchange' | 'pair' | 'metric' | 'interval' | 'timestamp'>): string {
  return `${r.organization}\u0000${r.asset}\u0000${r.exchange}\u0000${r.pair}\u0000${r.metric}\u0000${r.interval}\u0000${r.timestamp}`;
}

/**
 * ClickHouse refuses an insert block whose rows fall into more than 100 partitions
 * (max_partitions_per_insert_block); the table has one a month, and a backfill may span
 * more months than that.
 */
const MAX_MONTHS_PER_BLOCK = 100;

const monthOf = (ms: number) => {
  const d = new Date(ms);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
};

export class ReportedRepository {
  constructor(private readonly ch: ClickHouse) {}

  /**
   * Inserts rows as one block (more only when they span over 100 months), each with a
   * deduplication token derived from its rows' keys, values and push times: a retried
   * insert of the same rows is dropped by ClickHouse, and rows inserted again later (a
   * replay) only rewrite themselves.
   */
  async insert(rows: readonly ReportedRow[]): Promise<void> {
    for (const block of blocksOf(rows)) {
      const token = crypto.createHash('sha256');
      token.update('mm_reported');
      for (const r of block) token.update(`\u0000${reportedKey(r)}\u0000${r.value}\u0000${r.pushedAt}`);
      await this.ch.insert(
        'mm_reported',
        block.map((r) => ({
          organization: r.organization,
          asset: r.asset,
          exchange: r.exchange,
          pair: r.pair,
          metric: r.metric,
          interval: r.interval,
          timestamp: Math.floor(r.timestamp / 1000),
          value: r.value,
          pushed_at: r.pushedAt,
        })),
        { dedupToken: token.digest('hex') },
      );
    }
  }

  /** The current value of every key of an organization (optionally of one pair or metric), latest push per key. */
  async latest(organization: string, filter: { exchange?: string; pair?: string; metric?: string } = {}): Promise<ReportedRow[]> {
    const rows = await this.ch.query<Omit<ReportedRow, 'timestamp' | 'pushedAt'> & { ts: number | string; pushed: number | string }>(
      `SELECT organization, asset, exchange, pair, metric, interval, toUnixTimestamp(timestamp) AS ts, value,
              toUnixTimestamp64Milli(pushed_at) AS pushed
       FROM mm_reported FINAL
       WHERE organization = {organization:String}
         AND ({exchange:String} = '' OR exchange = {exchange:String})
         AND ({pair:String} = '' OR pair = {pair:String})
         AND ({metric:String} = '' OR metric = {metric:String})
       ORDER BY exchange, pair, interval, metric, timestamp`,
      { organization, exchange: filter.exchange ?? '', pair: filter.pair ?? '', metric: filter.metric ?? '' },
    );
    return rows.map(({ ts, pushed, ...r }) => ({ ...r, value: Number(r.value), timestamp: Number(ts) * 1000, pushedAt: Number(pushed) }));
  }
}

/** The rows in blocks of at most MAX_MONTHS_PER_BLOCK months each, in a fixed order (so the same rows give the same blocks and tokens). */
function blocksOf(rows: readonly ReportedRow[]): ReportedRow[][] {
  if (rows.length === 0) return [];
  const months = new Set(rows.map((r) => monthOf(r.timestamp)));
  if (months.size <= MAX_MONTHS_PER_BLOCK) return [[...rows]];
  const sorted = [...rows].sort((a, b) => a.timestamp - b.timestamp);
  const blocks: ReportedRow[][] = [];
  let block: ReportedRow[] = [];
  const seen = new Set<number>();
  for (const r of sorted) {
    const m = monthOf(r.timestamp);
    if (!seen.has(m) && seen.size === MAX_MONTHS_PER_BLOCK) {
      blocks.push(block);
      block = [];
      seen.clear();
    }
    seen.add(m);
    block.push(r);
  }
  blocks.push(block);
  return blocks;
}
