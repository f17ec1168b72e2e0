// What the market-maker endpoints read: trusted partials per wallet, pair and bucket (the
// trusted families, read like the market's), and reported values per organization, pair,
// interval and bucket. Every value is bound.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import { LEVELS_BPS, type Interval } from '../market/facts.ts';
import { FAMILIES, MM_FAMILIES } from '../market/families/index.ts';
import { float64ArrayColumn, numberColumn, valueColumn, type Columns } from '../../lib/native-columns.ts';
import type { TrustedDepthColumns, TrustedVolumeColumns, WalletKeyColumns } from './values.ts';
import { familyPartialsSql } from '../market/repositories/partials.ts';
import { bucketOf, type MarketQuery } from '../market/repositories/stored-rows.ts';
import type { Range } from '../market/window.ts';
import { REPORTED_INTERVAL_MS, REPORTED_INTERVALS, REPORTED_WRITES_SOURCE, type ReportedInterval } from './reported.ts';
import { HOUR_MS } from '../../lib/time.ts';
import { mapKey } from '../../lib/map-key.ts';

/** The write counts (market_writes) of everything the summary shows: trusted values, reported ones and the market's. */
const SUMMARY_SOURCES = [MM_FAMILIES.trustedDepth.tables.minutes, MM_FAMILIES.trustedVolume.tables.minutes, FAMILIES.book.tables.minutes, FAMILIES.trade.tables.minutes, REPORTED_WRITES_SOURCE];

export interface ReportedQuery {
  /** (organization, exchange, pair) whose values may be read. */
  keys: readonly { organization: string; exchange: string; pair: string }[];
  metrics: readonly string[];
  /**
   * The window's ranges. Bucketed, a value counts when its reported bucket reaches into one
   * and lies within a bucket of the interval in the zone; over `a`, when it starts in one.
   */
  ranges: readonly Range[];
  /** Bucketed by this interval (values of that interval only); `a`: one bucket per reported interval. */
  interval: Exclude<Interval, 'c'>;
  zone: string;
}

/** One reported bucket as last pushed: its values by metric, and when its latest push came. */
export interface ReportedValuesOf {
  organization: string;
  asset: string;
  exchange: string;
  pair: string;
  interval: ReportedInterval;
  /** The reported bucket's start (epoch ms). */
  start: number;
  /** The bucket of the query's interval it falls in (epoch s; 0 for `a`). */
  b: number;
  /** Per metric of the query (its position in ReportedQuery.metrics), the value; NaN where not reported. */
  values: Float64Array;
  /** The latest push of any of its values (epoch ms). */
  pushedAt: number;
}

/**
 * Reported values of one organization, pair, reported interval and bucket: sums and counts
 * per metric. Over `a` the interval is the coarsest of the window's tiles, and a depth's sum
 * and count are weighted by the tiles' length in five minutes (a mean over them is sum / count).
 */
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

/** The key columns of trusted rows read by column. */
const walletKeyColumns = (c: Columns): WalletKeyColumns => ({
  length: c.length,
  exchange: valueColumn<string>(c, 'exchange'),
  pair: valueColumn<string>(c, 'pair'),
  wallet_id: numberColumn(c, 'wallet_id'),
  b: numberColumn(c, 'b'),
});

const NO_KEYS: WalletKeyColumns = { length: 0, exchange: [], pair: [], wallet_id: new Float64Array(0), b: new Float64Array(0) };

const NO_DEPTH: TrustedDepthColumns = {
  ...NO_KEYS,
  minutes: new Float64Array(0),
  bid: { offsets: Uint32Array.of(0), values: new Float64Array(0) },
  ask: { offsets: Uint32Array.of(0), values: new Float64Array(0) },
};

const NO_VOLUME: TrustedVolumeColumns = {
  ...NO_KEYS,
  fills: new Float64Array(0),
  volume_usd: new Float64Array(0),
  usd_fills: new Float64Array(0),
};

/**
 * The trusted reads skip the engine's cache of decompressed blocks: a wallet series per
 * market maker and pair is tens of times the market's rows, and filling the cache with
 * them cost a first read a third more than reading past it, while a read from the filled
 * cache was no faster (docs/benchmarks.md, "Measurements behind the code").
 */
const PAST_THE_CACHE = 'SETTINGS use_uncompressed_cache = 0';

/** Buckets holding a key twice read again by name up to this many; more are read again all. */
const AGAIN_MAX_BUCKETS = 2000;

/** A reported row's interval (an Enum8 of 5m, 1h, 1d) in seconds, in SQL. */
const REPORTED_SECONDS_SQL = "multiIf(`interval` = '5m', 300, `interval` = '1h', 3600, 86400)";

/**
 * The PREWHERE and WHERE clauses of the reported values of the keys, metrics and
 * intervals asked whose bucket starts in the window's ranges; with `reaching`, also a
 * bucket that began before a range but reaches into it (a daily report over a window of an
 * hour), as the summary's buckets do.
 */
function reportedFilter(q: ReportedQuery, reaching: boolean, keys: 'exact' | 'each part'): { params: Record<string, unknown>; filter: string } {
  // The interval and the window filter first (PREWHERE): the other intervals' rows are most
  // of the table, and the key set is then asked only of the window's rows
  // (docs/benchmarks.md, "Measurements behind the code").
  const params: Record<string, unknown> = {
    metrics: [...q.metrics],
    intervals: q.interval === 'a' ? [...REPORTED_INTERVALS] : [q.interval],
    tz: q.zone,
  };
  // Bucketed (one reported interval, that of the buckets): a report reaching into the window
  // is its first bucket's, which the window cuts (its row would otherwise read 0).
  const bucketed = q.interval !== 'a' && !reaching ? REPORTED_INTERVAL_MS[q.interval as ReportedInterval] / 1000 : undefined;
  if (bucketed !== undefined) {
    params.reported_seconds = bucketed;
    params.reported_last = bucketed - 1;
  }
  const ranges = q.ranges.map((r, i) => {
    params[`f${i}`] = Math.floor(r[0] / 1000);
    params[`t${i}`] = Math.ceil(r[1] / 1000);
    const from = reaching
      ? `timestamp >= toDateTime({f${i}:UInt32}, 'UTC') - INTERVAL 1 DAY AND timestamp + toIntervalSecond(${REPORTED_SECONDS_SQL}) > toDateTime({f${i}:UInt32}, 'UTC')`
      : bucketed !== undefined
        ? `timestamp > toDateTime({f${i}:UInt32}, 'UTC') - toIntervalSecond({reported_seconds:UInt32})`
        : `timestamp >= toDateTime({f${i}:UInt32}, 'UTC')`;
    return `(${from} AND timestamp < toDateTime({t${i}:UInt32}, 'UTC'))`;
  });
  // A report counts in a bucket it lies within: a UTC day's report is no day of another zone,
  // nor a UTC hour's an hour of a zone half an hour off.
  const fits = bucketed !== undefined ? ` AND ${bucketOf(q.interval as ReportedInterval, 'timestamp')} = ${bucketOf(q.interval as ReportedInterval, 'timestamp + toIntervalSecond({reported_last:UInt32})')}` : '';
  // `each part`: the keys' organizations, exchanges and pairs each, a superset of the keys
  // the caller narrows itself; each a set of few strings, where a set of (organization,
  // exchange, pair) took a third of the statement (docs/benchmarks.md).
  let keyFilter: string;
  if (keys === 'exact') {
    params.keys = q.keys.map((k) => new TupleParam([k.organization, k.exchange, k.pair]));
    keyFilter = '(organization, exchange, pair) IN {keys:Array(Tuple(String, String, String))}';
  } else {
    params.organizations = [...new Set(q.keys.map((k) => k.organization))];
    params.exchanges = [...new Set(q.keys.map((k) => k.exchange))];
    params.pairs = [...new Set(q.keys.map((k) => k.pair))];
    keyFilter = 'organization IN {organizations:Array(String)} AND exchange IN {exchanges:Array(String)} AND pair IN {pairs:Array(String)}';
  }
  const filter = `PREWHERE \`interval\` IN {intervals:Array(Enum8('5m' = 1, '1h' = 2, '1d' = 3))} AND (${ranges.join(' OR ')})
    WHERE ${keyFilter} AND metric IN {metrics:Array(String)}${fits}`;
  return { params, filter };
}

/**
 * Reported buckets read by column (reportedBuckets' statements): each bucket's values by
 * metric position (`ms`, 1-based, and `vs`), NaN where not reported, each a view of one
 * array for all buckets.
 */
function reportedBucketsOf(c: Columns, metrics: number): ReportedValuesOf[] {
  const organization = valueColumn<string>(c, 'organization');
  const asset = valueColumn<string>(c, 'asset');
  const exchange = valueColumn<string>(c, 'exchange');
  const pair = valueColumn<string>(c, 'pair');
  const iv = valueColumn<ReportedInterval>(c, 'iv');
  const [s, b, pushed] = [numberColumn(c, 's'), numberColumn(c, 'b'), numberColumn(c, 'pushed')];
  const ms = float64ArrayColumn(c, 'ms');
  const vs = float64ArrayColumn(c, 'vs');
  const all = new Float64Array(c.length * metrics).fill(NaN);
  const out: ReportedValuesOf[] = new Array(c.length);
  for (let i = 0; i < c.length; i++) {
    const values = all.subarray(i * metrics, (i + 1) * metrics);
    const v = vs.offsets[i]!;
    for (let k = ms.offsets[i]!, j = v; k < ms.offsets[i + 1]!; k++, j++) values[ms.values[k]! - 1] = vs.values[j]!;
    out[i] = { organization: organization[i]!, asset: asset[i]!, exchange: exchange[i]!, pair: pair[i]!, interval: iv[i]!, start: s[i]! * 1000, b: b[i]!, values, pushedAt: pushed[i]! };
  }
  return out;
}

export class MarketMakerMetrics {
  constructor(private readonly ch: ClickHouse) {}

  /**
   * Trusted depth and volume (those asked for) per wallet, pair and bucket, of these wallets
   * only. With `levels` (indexes into L), the depth sums hold only those levels, in that
   * order: an answer of a few levels does not carry all of L's. By column: a month at
   * `5m` is 40,000 rows of 50 sums, and as many of volume.
   */
  async trusted(
    q: MarketQuery,
    wallets: readonly number[],
    want: { depth: boolean; volume: boolean } = { depth: true, volume: true },
    levels?: readonly number[],
  ): Promise<{ depth: TrustedDepthColumns; volume: TrustedVolumeColumns }> {
    if (q.pairs.length === 0 || wallets.length === 0) return { depth: NO_DEPTH, volume: NO_VOLUME };
    const where = { text: 'wallet_id IN {wallets:Array(UInt64)}', params: { wallets: [...wallets] } };
    const every = levels === undefined || (levels.length === LEVELS_BPS.length && levels.every((l, i) => l === i));
    const readDepth = async (): Promise<TrustedDepthColumns> => {
      const sql = familyPartialsSql(MM_FAMILIES.trustedDepth, q, where);
      if (!sql) return NO_DEPTH;
      // Binary: a month of depth rows is over a million numbers, which JSON doubled the read of.
      const c = every
        ? await this.ch.queryColumns(`${sql.text} ${PAST_THE_CACHE}`, sql.params)
        : await this.ch.queryColumns(
            `SELECT exchange, pair, wallet_id, b, minutes, arrayMap(i -> bid_depth_sum[i], {levels:Array(UInt8)}) AS bid_depth_sum,
               arrayMap(i -> ask_depth_sum[i], {levels:Array(UInt8)}) AS ask_depth_sum FROM (${sql.text}) ${PAST_THE_CACHE}`,
            { ...sql.params, levels: levels!.map((i) => i + 1) },
          );
      return {
        ...walletKeyColumns(c),
        minutes: numberColumn(c, 'minutes'),
        bid: float64ArrayColumn(c, 'bid_depth_sum'),
        ask: float64ArrayColumn(c, 'ask_depth_sum'),
      };
    };
    const readVolume = async (): Promise<TrustedVolumeColumns> => {
      const sql = familyPartialsSql(MM_FAMILIES.trustedVolume, q, where);
      if (!sql) return NO_VOLUME;
      const c = await this.ch.queryColumns(`${sql.text} ${PAST_THE_CACHE}`, sql.params);
      return {
        ...walletKeyColumns(c),
        fills: numberColumn(c, 'fills'),
        volume_usd: numberColumn(c, 'volume_usd'),
        usd_fills: numberColumn(c, 'usd_fills'),
      };
    };
    const [depth, volume] = await Promise.all([want.depth ? readDepth() : NO_DEPTH, want.volume ? readVolume() : NO_VOLUME]);
    return { depth, volume };
  }

  /**
   * Per hour start (epoch ms) in [from, to) widened to whole hours, how many times the
   * summary's sources were written into it, all sources together: a count only grows, so
   * an equal sum means no write between two reads (schemas/clickhouse/004_market_writes.sql).
   */
  async summaryWrites(from: number, to: number): Promise<Map<number, number>> {
    const rows = await this.ch.query<{ hour: number; writes: number | string }>(
      `SELECT toUnixTimestamp(hour) AS hour, sum(writes) AS writes FROM market_writes
       WHERE source IN {sources:Array(String)} AND hour >= toDateTime({from:UInt32}, 'UTC') AND hour < toDateTime({to:UInt32}, 'UTC')
       GROUP BY hour`,
      { sources: SUMMARY_SOURCES, from: Math.floor(from / HOUR_MS) * (HOUR_MS / 1000), to: Math.ceil(to / HOUR_MS) * (HOUR_MS / 1000) },
    );
    return new Map(rows.map((r) => [Number(r.hour) * 1000, Number(r.writes)]));
  }

  /**
   * Every reported bucket that starts in the window or reaches into it, each as it was last
   * pushed (the reconciliation judges a report whole: it compares each with the trusted
   * values of the minutes its push covers, whatever the window).
   * Read binary, as the trusted values: a month is millions of values. Of the keys'
   * organizations, exchanges and pairs each, more than the keys: the caller keeps its keys'
   * buckets only (the reconciliation keeps the makers' pairs it shows).
   *
   * A key (metric of a bucket) pushed once is most keys: merges keep only the latest push.
   * So the values are read grouped per bucket only, each bucket telling whether a metric
   * came twice; only those buckets are read again with the latest push per key picked
   * (argMax). Grouping every key to pick its latest took three times as long.
   */
  async reportedBuckets(q: ReportedQuery): Promise<ReportedValuesOf[]> {
    return this.reportedRows(q, true, 'each part');
  }

  /** reportedBuckets' read, of the buckets reportedFilter names with `reaching` and `keys`. */
  private async reportedRows(q: ReportedQuery, reaching: boolean, keys: 'exact' | 'each part'): Promise<ReportedValuesOf[]> {
    if (q.keys.length === 0 || q.metrics.length === 0 || q.ranges.length === 0) return [];
    const { params, filter } = reportedFilter(q, reaching, keys);
    const bucket = q.interval === 'a' ? '0' : bucketOf(q.interval);
    // A metric's position in q.metrics (1-based) by a hash lookup: indexOf over the list
    // for each value cost as much as the rest of the read.
    const position = 'transform(metric, {metrics:Array(String)}, arrayMap(i -> toUInt16(i), range(1, 1 + length({metrics:Array(String)}))), toUInt16(0))';
    const first = await this.ch.queryColumns(
      `SELECT organization, any(asset) AS asset, exchange, pair, toString(\`interval\`) AS iv, toUnixTimestamp(t) AS s, ${bucket} AS b,
         groupArray(${position} AS m) AS ms, groupArray(value) AS vs, toUnixTimestamp64Milli(max(pushed_at)) AS pushed,
         bitCount(groupBitOr(bitShiftLeft(toUInt64(1), m % 64))) != count() AS repeated
       FROM mm_reported
       ${filter}
       GROUP BY organization, exchange, pair, \`interval\`, timestamp AS t`,
      params,
    );
    const rows = reportedBucketsOf(first, q.metrics.length);
    const repeated = numberColumn(first, 'repeated');
    const again = rows.filter((_, i) => repeated[i] !== 0);
    if (again.length > 0) {
      // A metric twice in a bucket (a push not merged away yet; a bit shared by two metrics
      // of over 64 only costs this read): those buckets with each metric's latest push.
      // Many such buckets (a backlog not merged yet) are all read again: a bound list of tens
      // of thousands of keys can take the engine far longer than the read
      // (docs/benchmarks.md, "Measurements behind the code").
      const few = again.length <= AGAIN_MAX_BUCKETS;
      if (few) params.again = again.map((r) => new TupleParam([r.organization, r.exchange, r.pair, r.interval, r.start / 1000]));
      const latest = await this.ch.queryColumns(
        `SELECT organization, any(asset) AS asset, exchange, pair, toString(e) AS iv, toUnixTimestamp(t) AS s, ${bucket} AS b,
           groupArray(m) AS ms, groupArray(v) AS vs, toUnixTimestamp64Milli(max(p)) AS pushed
         FROM (
           SELECT organization, exchange, pair, \`interval\` AS e, timestamp AS t, any(asset) AS asset, ${position} AS m,
             argMax(value, (pushed_at, seq)) AS v, max(pushed_at) AS p
           FROM mm_reported
           ${filter}
             ${few ? 'AND (organization, exchange, pair, toString(`interval`), toUnixTimestamp(timestamp)) IN {again:Array(Tuple(String, String, String, String, UInt32))}' : ''}
           GROUP BY organization, exchange, pair, \`interval\`, metric, timestamp
         )
         GROUP BY organization, exchange, pair, e, t`,
        params,
      );
      const k = (r: ReportedValuesOf) => `${r.organization}\u0000${r.exchange}\u0000${r.pair}\u0000${r.interval}\u0000${r.start}`;
      const byKey = new Map(reportedBucketsOf(latest, q.metrics.length).map((r) => [k(r), r]));
      for (let i = 0; i < rows.length; i++) if (repeated[i] !== 0) rows[i] = byKey.get(k(rows[i]!))!;
    }
    return rows;
  }

  /**
   * Reported values in the window, per organization, pair, reported interval and bucket of
   * the query's interval: each metric's sum and count over the reported buckets in it, each
   * as last pushed. A bucket of 5m, 1h or 1d holds the reported buckets of its own interval
   * only, about one: those are read as reportedBuckets reads them (of exactly the keys, none
   * reaching in from before the window) and summed here, where the engine's three groupings
   * (latest push per metric, metric per bucket, bucket) took four times as long
   * (docs/benchmarks.md, "Measurements behind the code"). Over `a` a bucket holds a month of
   * 5m reports as well: grouped in the engine.
   */
  async reported(q: ReportedQuery): Promise<ReportedBucket[]> {
    if (q.interval === 'a') return this.reportedGrouped(q);
    const rows = await this.reportedRows(q, false, 'exact');
    const n = q.metrics.length;
    const buckets = new Map<string, { first: ReportedValuesOf; sums: Float64Array; counts: Uint32Array }>();
    for (const r of rows) {
      const k = mapKey(r.organization, r.exchange, r.pair, r.interval, r.b);
      let bk = buckets.get(k);
      if (!bk) buckets.set(k, (bk = { first: r, sums: new Float64Array(n), counts: new Uint32Array(n) }));
      for (let i = 0; i < n; i++) {
        const v = r.values[i]!;
        if (Number.isNaN(v)) continue;
        bk.sums[i] = bk.sums[i]! + v;
        bk.counts[i] = bk.counts[i]! + 1;
      }
    }
    return [...buckets.values()].map(({ first: r, sums: s, counts: c }) => {
      const sums = new Map<string, number>();
      const counts = new Map<string, number>();
      for (let i = 0; i < n; i++) {
        if (c[i] === 0) continue;
        sums.set(q.metrics[i]!, s[i]!);
        counts.set(q.metrics[i]!, c[i]!);
      }
      return { organization: r.organization, asset: r.asset, exchange: r.exchange, pair: r.pair, interval: r.interval, b: r.b, sums, counts };
    });
  }

  /**
   * reported over a window read as one bucket (`a`): per market maker, pair and metric, the
   * reports starting in the window tiled coarsest first (a day's report where there is one;
   * in a day without, its hours'; in an hour without either, its 5-minute reports), so a day
   * reported at several intervals counts once and a day reported only hourly still counts.
   * Volume is the tiles' sum; depth their mean weighted by length (in 5-minute units), so a
   * day's value weighs as its 288 five minutes. One row per pair, labelled with the coarsest
   * interval in it. Grouped in the engine, each key's latest push by argMax.
   */
  private async reportedGrouped(q: ReportedQuery): Promise<ReportedBucket[]> {
    if (q.keys.length === 0 || q.metrics.length === 0 || q.ranges.length === 0) return [];
    const { params, filter } = reportedFilter(q, false, 'exact');
    // The latest push of each key by argMax over its pushes, not FINAL (which cost most of
    // the read: docs/benchmarks.md, "Measurements behind the code"); of two pushes of a
    // key in the same millisecond the one of the later Kafka message (seq, 022_reported_push_order.sql). The interval is
    // compared as the enum it is stored as, and each bucket's sums and counts come as
    // (metric position, sum, count), the metric's name not written in every row.
    const rows = await this.ch.queryBinary<Omit<ReportedBucket, 'sums' | 'counts'> & { cells: [number, number, number | string][] }>(
      `SELECT organization, any(asset) AS asset, exchange, pair, toString(max(e)) AS \`interval\`, 0 AS b, groupArray((m, s, n)) AS cells
       FROM (
         SELECT organization, any(asset) AS asset, exchange, pair, max(\`interval\`) AS e, indexOf({metrics:Array(String)}, metric) AS m,
           if(metric = 'volume/volume', sum(v), sum(v * w)) AS s, if(metric = 'volume/volume', count(), sum(w)) AS n
         FROM (
           SELECT *, multiIf(\`interval\` = '5m', 1, \`interval\` = '1h', 12, 288) AS w,
             max(\`interval\` = '1d') OVER (PARTITION BY organization, exchange, pair, metric, toStartOfDay(t, 'UTC')) AS has_day,
             max(\`interval\` = '1h') OVER (PARTITION BY organization, exchange, pair, metric, toStartOfHour(t, 'UTC')) AS has_hour
           FROM (
             SELECT organization, exchange, pair, \`interval\`, metric, timestamp AS t, asset, argMax(value, (pushed_at, seq)) AS v
             FROM mm_reported
             ${filter}
             GROUP BY organization, exchange, pair, \`interval\`, metric, t, asset
           )
         )
         WHERE \`interval\` = '1d' OR (NOT has_day AND (\`interval\` = '1h' OR NOT has_hour))
         GROUP BY organization, exchange, pair, metric
       )
       GROUP BY organization, exchange, pair`,
      params,
    );
    return rows.map((r) => {
      const sums = new Map<string, number>();
      const counts = new Map<string, number>();
      for (const [m, sum, n] of r.cells) {
        const metric = q.metrics[Number(m) - 1]!;
        sums.set(metric, Number(sum));
        counts.set(metric, Number(n));
      }
      return { organization: r.organization, asset: r.asset, exchange: r.exchange, pair: r.pair, interval: r.interval, b: Number(r.b), sums, counts };
    });
  }
}
