// Writes of mm_reported (schemas/clickhouse/020_reported_metrics.sql): the values market
// makers push, one row per key and push, the latest push of a key winning on read (FINAL).
// The endpoints' reads live elsewhere; `latest` is the plain read the tests and checks use.
import crypto from 'node:crypto';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { ReportedMessage } from '../../schemas/index.ts';
import { HOUR_MS } from '../../lib/time.ts';

/** The intervals market makers report at, coarsest first (the order in which a window read whole prefers them). */
export const REPORTED_INTERVALS = ['1d', '1h', '5m'] as const;
export type ReportedInterval = (typeof REPORTED_INTERVALS)[number];

/** Length of each interval in ms: a value's timestamp is a multiple of it (UTC). */
export const REPORTED_INTERVAL_MS: Record<ReportedInterval, number> = { '5m': 300_000, '1h': 3_600_000, '1d': 86_400_000 };

/** An item of `more`: the fields an item of the same organization, asset, exchange and pair does not repeat. */
export type ReportedMore = Pick<ReportedMessage, 'metric' | 'interval' | 'timestamp' | 'value'>;

/**
 * An mm.reported message: one item, and optionally (`more`) further items of the same
 * organization, asset, exchange and pair, pushed together (schemas/kafka/mm.reported.schema.json).
 * The push endpoint produces one message per key of a request, not one per item: a
 * message per item cost most of a push's time in the producer and the processor.
 */
export type ReportedBatch = ReportedMessage & { more?: ReportedMore[] };

/** Items per message at most: a message stays far under the broker's 1 MB limit (an item is about 100 bytes). */
export const MAX_ITEMS_PER_MESSAGE = 2_000;

const OWN_FIELDS = ['metric', 'interval', 'timestamp', 'value'] as const;

/**
 * The items of a message, each a whole mm.reported item (the first is the message's own
 * fields), or why `more` cannot be read; each item still needs its schema check.
 */
export function itemsOf(value: unknown): { items: unknown[] } | { problem: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { items: [value] };
  const { more, ...first } = value as Record<string, unknown>;
  if (more === undefined) return { items: [value] };
  if (!Array.isArray(more)) return { problem: 'schema: /more must be a list of items' };
  const items: unknown[] = [first];
  for (const x of more) {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) return { problem: `schema: /more/${items.length - 1} must be an object` };
    // Only an item's own fields come from it: the key's fields are the message's.
    const item: Record<string, unknown> = { organization: first.organization, asset: first.asset, exchange: first.exchange, pair: first.pair };
    for (const f of OWN_FIELDS) if ((x as Record<string, unknown>)[f] !== undefined) item[f] = (x as Record<string, unknown>)[f];
    items.push(item);
  }
  return { items };
}

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
  /** The Kafka offset of its message: orders two pushes of equal pushedAt (022_reported_push_order.sql); 0 when not read. */
  seq?: number;
}

/** The `source` of mm_reported's write counts in market_writes. */
export const REPORTED_WRITES_SOURCE = 'mm_reported';

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
      for (const r of block) token.update(`\u0000${reportedKey(r)}\u0000${r.value}\u0000${r.pushedAt}\u0000${r.seq ?? 0}`);
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
          seq: r.seq ?? 0,
        })),
        { dedupToken: token.digest('hex') },
      );
    }
    // Last, so whoever reads the count after this sees the rows above: the API keeps the
    // summary's rows of sealed buckets while the counts of their hours stand
    // (api/resources/market-makers/sealed-rows.ts; schemas/clickhouse/004_market_writes.sql).
    const hours = [...new Set(rows.map((r) => Math.floor(r.timestamp / HOUR_MS) * (HOUR_MS / 1000)))];
    if (hours.length > 0) {
      await this.ch.command(`INSERT INTO market_writes (source, hour, writes) SELECT {source:String}, arrayJoin({written:Array(DateTime('UTC'))}), 1`, {
        source: REPORTED_WRITES_SOURCE,
        written: hours,
      });
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
