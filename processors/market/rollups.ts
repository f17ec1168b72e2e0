// Hour and day rollups, recomputed from what is stored below them: an hour from its minute
// rows, a day from its hour rows. Recomputing is idempotent, so a crash between writing
// minutes and their rollups is mended by computing those hours again at the next start.
// Every recompute also counts a write of its hours in market_writes, which tells readers
// that cache rows of those hours to compute them again. The SQL is built from the
// constants below only; keys and times are bound.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { MinuteTable } from './minute-repository.ts';

interface RollupSql {
  hours: string;
  days: string;
  /** Aggregates of minute rows into an hour row, in the hour table's column order. */
  fromMinutes: string;
  /** Aggregates of hour rows into a day row, same order. */
  fromHours: string;
}

const LEVELS = '[0, 0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 300, 500]';
const AMOUNTS = '[25000, 50000, 100000, 150000, 250000]';

const ROLLUPS: Record<MinuteTable, RollupSql> = {
  book_minutes: {
    hours: 'book_hours',
    days: 'book_days',
    fromMinutes: `count(), sum(samples), sum(mid), min(first_mid), max(last_mid), sum(spread_abs), sum(spread_bps),
      max(spread_bps_max), max(top), min(tick), countIf(depth_samples > 0),
      sumForEach(bid_depth), sumForEach(ask_depth), sumForEach(bid_count), sumForEach(ask_count),
      sumForEach(arrayMap(l -> toUInt64(spread_bps_max <= l), ${LEVELS})),
      sumForEach(arrayMap((d, a) -> toUInt64(d > a),
        arrayFlatten(arrayWithConstant(5, arrayResize(min_depth, 25, 0.))),
        arrayFlatten(arrayMap(a -> arrayWithConstant(25, a), ${AMOUNTS})))),
      sumForEach(arrayMap(x -> ifNull(x, 0.), slippage_buy)), sumForEach(arrayMap(x -> toUInt64(isNotNull(x)), slippage_buy)),
      sumForEach(arrayMap(x -> ifNull(x, 0.), slippage_sell)), sumForEach(arrayMap(x -> toUInt64(isNotNull(x)), slippage_sell))`,
    fromHours: `sum(minutes), sum(samples), sum(mid_sum), min(first), max(last), sum(spread_abs_sum), sum(spread_bps_sum),
      max(spread_max), max(last_top), min(tick_min), sum(depth_minutes),
      sumForEach(bid_depth_sum), sumForEach(ask_depth_sum), sumForEach(bid_count_sum), sumForEach(ask_count_sum),
      sumForEach(spread_up), sumForEach(depth_up),
      sumForEach(slip_buy_sum), sumForEach(slip_buy_n), sumForEach(slip_sell_sum), sumForEach(slip_sell_n)`,
  },
  trade_minutes: {
    hours: 'trade_hours',
    days: 'trade_days',
    fromMinutes: 'sum(trades), sum(amount), sum(notional), sum(volume_usd), sum(usd_trades)',
    fromHours: 'sum(trades), sum(amount), sum(notional), sum(volume_usd), sum(usd_trades)',
  },
  derivative_minutes: {
    hours: 'derivative_hours',
    days: 'derivative_days',
    fromMinutes: 'max(funding), max(open_interest)',
    fromHours: 'max(funding), max(open_interest)',
  },
};

const HOUR = 3_600_000;
const DAY = 86_400_000;

export interface RollupKey {
  exchange: string;
  pair: string;
  /** A minute (epoch ms) whose hour and day need recomputing. */
  minute: number;
}

export class Rollups {
  constructor(
    private readonly ch: ClickHouse,
    private readonly table: MinuteTable,
  ) {}

  /** Recomputes the hours, then the days, that contain these minutes. */
  async recompute(keys: RollupKey[]): Promise<void> {
    if (keys.length === 0) return;
    const sql = ROLLUPS[this.table];
    const hours = unique(keys, HOUR);
    const days = unique(keys, DAY);
    await this.ch.command(
      `INSERT INTO {hours:Identifier}
       SELECT exchange, pair, toStartOfHour(minute) AS hour_start, ${sql.fromMinutes}, now64(3)
       FROM {minutes:Identifier} FINAL
       WHERE minute >= toDateTime({lo:UInt32}, 'UTC') AND minute < toDateTime({hi:UInt32}, 'UTC')
         AND (exchange, pair, toStartOfHour(minute)) IN {keys:Array(Tuple(String, String, DateTime('UTC')))}
       GROUP BY exchange, pair, hour_start`,
      { hours: sql.hours, minutes: this.table, ...range(hours, HOUR), keys: hours.map((k) => new TupleParam([k.exchange, k.pair, k.start / 1000])) },
    );
    await this.ch.command(
      `INSERT INTO {days:Identifier}
       SELECT exchange, pair, toStartOfDay(bucket) AS day_start, ${sql.fromHours}, now64(3)
       FROM {hours:Identifier} FINAL
       WHERE bucket >= toDateTime({lo:UInt32}, 'UTC') AND bucket < toDateTime({hi:UInt32}, 'UTC')
         AND (exchange, pair, toStartOfDay(bucket)) IN {keys:Array(Tuple(String, String, DateTime('UTC')))}
       GROUP BY exchange, pair, day_start`,
      { days: sql.days, hours: sql.hours, ...range(days, DAY), keys: days.map((k) => new TupleParam([k.exchange, k.pair, k.start / 1000])) },
    );
    // Last, so whoever reads the count after this sees the rows above (004_market_writes.sql).
    await this.ch.command(
      `INSERT INTO market_writes (source, hour, writes) SELECT {source:String}, arrayJoin({written:Array(DateTime('UTC'))}), 1`,
      { source: this.table, written: [...new Set(hours.map((k) => k.start / 1000))] },
    );
  }

  /**
   * Hours whose rollups may be missing: those of minutes written after `since` (epoch ms,
   * the processor's last recorded progress). With no progress on record (0: a first start,
   * or new topics over tables that hold history) that bound would be every minute ever
   * written; the hours whose hour or day row is older than their newest minute, or
   * missing, are exactly the ones to compute.
   */
  async writtenSince(since: number): Promise<RollupKey[]> {
    const sql = ROLLUPS[this.table];
    const rows =
      since > 0
        ? await this.ch.query<{ exchange: string; pair: string; hour: number }>(
            `SELECT DISTINCT exchange, pair, toUnixTimestamp(toStartOfHour(minute)) AS hour
             FROM {minutes:Identifier} WHERE closed_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`,
            { minutes: this.table, since },
          )
        : await this.ch.query<{ exchange: string; pair: string; hour: number }>(
            // A missing hour or day row joins as computed_at 0, older than any minute.
            `SELECT m.exchange AS exchange, m.pair AS pair, toUnixTimestamp(m.hour) AS hour
             FROM (SELECT exchange, pair, toStartOfHour(minute) AS hour, max(closed_at) AS closed
                   FROM {minutes:Identifier} GROUP BY exchange, pair, hour) AS m
             LEFT JOIN (SELECT exchange, pair, bucket, max(computed_at) AS computed
                   FROM {hours:Identifier} GROUP BY exchange, pair, bucket) AS h
               ON h.exchange = m.exchange AND h.pair = m.pair AND h.bucket = m.hour
             LEFT JOIN (SELECT exchange, pair, bucket, max(computed_at) AS computed
                   FROM {days:Identifier} GROUP BY exchange, pair, bucket) AS d
               ON d.exchange = m.exchange AND d.pair = m.pair AND d.bucket = toStartOfDay(m.hour)
             WHERE h.computed < m.closed OR d.computed < m.closed`,
            { minutes: this.table, hours: sql.hours, days: sql.days },
            { join_use_nulls: 0 },
          );
    return rows.map((r) => ({ exchange: r.exchange, pair: r.pair, minute: Number(r.hour) * 1000 }));
  }
}

function unique(keys: RollupKey[], unit: number): { exchange: string; pair: string; start: number }[] {
  const seen = new Map<string, { exchange: string; pair: string; start: number }>();
  for (const k of keys) {
    const start = Math.floor(k.minute / unit) * unit;
    const id = `${k.exchange}\u0000${k.pair}\u0000${start}`;
    if (!seen.has(id)) seen.set(id, { exchange: k.exchange, pair: k.pair, start });
  }
  return [...seen.values()];
}

function range(keys: { start: number }[], unit: number): { lo: number; hi: number } {
  let lo = Infinity;
  let hi = -Infinity;
  for (const k of keys) {
    lo = Math.min(lo, k.start);
    hi = Math.max(hi, k.start + unit);
  }
  return { lo: lo / 1000, hi: hi / 1000 };
}
