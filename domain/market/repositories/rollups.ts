// Hour and day rollups of a family, recomputed from what is stored below them: an hour
// from its minute rows, a day from its hour rows, with the family's aggregates
// (families/family.ts). Recomputing is idempotent, so a crash between writing minutes and
// their rollups is mended by computing those hours again at the next start. Every
// recompute also counts a write of its hours in market_writes, which tells readers that
// keep rows of those hours to compute them again. The SQL is derived from the family's
// declaration only; keys, times and the family's values are bound.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse, Params } from '../../../lib/clickhouse.ts';
import { fromRollups, hourFromMinutes, keyColumns, rollupColumns, type Family } from '../families/family.ts';
import { DAY_MS, HOUR_MS } from '../../../lib/time.ts';

/** Keys a rollup statement recomputes at most (see recompute). */
const KEYS_PER_STATEMENT = 500;

export interface RollupKey {
  exchange: string;
  pair: string;
  /** A minute (epoch ms) whose hour and day need recomputing. */
  minute: number;
}

/** A key's hour or day: its pair and the bucket's start (epoch ms). */
interface Start {
  exchange: string;
  pair: string;
  start: number;
}

export class Rollups {
  private readonly columns: string;
  /** exchange, pair and the family's series keys, as the rollups select and group them. */
  private readonly keys: string;

  constructor(
    private readonly ch: ClickHouse,
    private readonly family: Family,
  ) {
    this.keys = keyColumns(family).join(', ');
    this.columns = [this.keys, 'bucket', ...rollupColumns(family), 'computed_at'].join(', ');
  }

  /** Whether the family keeps rows of the open hour (rollOpen). */
  get opens(): boolean {
    return this.family.tables.open !== undefined;
  }

  /**
   * Recomputes the hours, then the days, that contain these minutes.
   *
   * The keys reach IN through a subquery, never as the bound array itself: this engine
   * matches a large constant array of tuples by scanning it for every row, so a recompute
   * of many pairs and hours (a day of thousands of pairs, a catch-up after downtime) grew
   * with rows x keys; a subquery's keys become a hashed set (docs/benchmarks.md,
   * "Measurements behind the code").
   *
   * At most KEYS_PER_STATEMENT keys a statement: the embedded engine runs one bound
   * statement at a time, and a request waits for the one running, so a minute close of
   * thousands of pairs runs as several short statements rather than one long one
   * (docs/benchmarks.md, "Measurements behind the code"). All hours are written before
   * any day is computed from them.
   */
  async recompute(keys: RollupKey[]): Promise<void> {
    if (keys.length === 0) return;
    const { tables, params } = this.family;
    const hours = unique(keys, HOUR_MS);
    const days = unique(keys, DAY_MS);
    await this.inSlices(
      `INSERT INTO {hours:Identifier} (${this.columns})
       SELECT ${this.keys}, toStartOfHour(minute) AS hour_start, ${hourFromMinutes(this.family)}, now64(3)
       FROM {minutes:Identifier} FINAL
       WHERE minute >= toDateTime({lo:UInt32}, 'UTC') AND minute < toDateTime({hi:UInt32}, 'UTC')
         AND (exchange, pair, toStartOfHour(minute)) IN (SELECT arrayJoin({keys:Array(Tuple(String, String, DateTime('UTC')))}))
       GROUP BY ${this.keys}, hour_start`,
      { ...params, hours: tables.hours, minutes: tables.minutes },
      hours,
      HOUR_MS,
    );
    await this.inSlices(
      `INSERT INTO {days:Identifier} (${this.columns})
       SELECT ${this.keys}, toStartOfDay(bucket) AS day_start, ${fromRollups(this.family)}, now64(3)
       FROM {hours:Identifier} FINAL
       WHERE bucket >= toDateTime({lo:UInt32}, 'UTC') AND bucket < toDateTime({hi:UInt32}, 'UTC')
         AND (exchange, pair, toStartOfDay(bucket)) IN (SELECT arrayJoin({keys:Array(Tuple(String, String, DateTime('UTC')))}))
       GROUP BY ${this.keys}, day_start`,
      { days: tables.days, hours: tables.hours },
      days,
      DAY_MS,
    );
    // Last, so whoever reads the count after this sees the rows above (004_market_writes.sql).
    await this.countWrites(keys);
  }

  /**
   * Rolls up the open hour's minutes before `through` (epoch ms, a mark inside the hour)
   * into the rows of that mark (schemas/clickhouse/008), for these keys of the hour: the
   * family's processor does so every few minutes (processors/market/sealed-rollups.ts), so
   * that windows read the open hour's minutes only from the mark on. Keys of other hours
   * are not this call's. Idempotent, and counted as a write of the hour, as recompute is.
   */
  async rollOpen(keys: RollupKey[], through: number): Promise<void> {
    const { tables, params } = this.family;
    const hour = Math.floor(through / HOUR_MS) * HOUR_MS;
    const of = keys.filter((k) => Math.floor(k.minute / HOUR_MS) * HOUR_MS === hour);
    if (of.length === 0 || through === hour) return;
    if (!tables.open) throw new Error(`${tables.minutes} has no table of the open hour's rows`);
    await this.inSlices(
      `INSERT INTO {open:Identifier} (${this.columns})
       SELECT ${this.keys}, toDateTime({through:UInt32}, 'UTC') AS open_mark, ${hourFromMinutes(this.family)}, now64(3)
       FROM {minutes:Identifier} FINAL
       WHERE minute >= toDateTime({lo:UInt32}, 'UTC') AND minute < toDateTime({through:UInt32}, 'UTC')
         AND (exchange, pair, toStartOfHour(minute)) IN (SELECT arrayJoin({keys:Array(Tuple(String, String, DateTime('UTC')))}))
       GROUP BY ${this.keys}`,
      { ...params, open: tables.open, minutes: tables.minutes, through: through / 1000 },
      unique(of, HOUR_MS),
      HOUR_MS,
    );
    await this.countWrites(of);
  }

  /**
   * Counts a write into the hours of these minutes (market_writes), which tells readers
   * that keep rows of those hours to compute them again: after a recompute, and after
   * minutes whose hours are rolled up later (processors/market/sealed-rollups.ts).
   * Not retried: a count written twice would only make readers compute those hours again,
   * but a failed attempt here fails the flush, which writes the minutes again anyway.
   */
  async countWrites(keys: RollupKey[]): Promise<void> {
    if (keys.length === 0) return;
    await this.ch.command(
      `INSERT INTO market_writes (source, hour, writes) SELECT {source:String}, arrayJoin({written:Array(DateTime('UTC'))}), 1`,
      { source: this.family.tables.minutes, written: [...new Set(keys.map((k) => Math.floor(k.minute / HOUR_MS) * (HOUR_MS / 1000)))] },
    );
  }

  /** The hours (as keys) of the minutes stored from `from` on (epoch ms): what a restart has left to roll up. */
  async hoursFrom(from: number): Promise<RollupKey[]> {
    const rows = await this.ch.query<{ exchange: string; pair: string; hour: number }>(
      `SELECT DISTINCT exchange, pair, toUnixTimestamp(toStartOfHour(minute)) AS hour
       FROM {minutes:Identifier}
       WHERE toStartOfHour(minute) >= toStartOfHour(toDateTime({from:UInt32}, 'UTC')) AND minute >= toDateTime({from:UInt32}, 'UTC')`,
      { minutes: this.family.tables.minutes, from: Math.floor(from / 1000) },
    );
    return rows.map((r) => ({ exchange: r.exchange, pair: r.pair, minute: Number(r.hour) * 1000 }));
  }

  /** Runs a rollup statement once per slice of the keys, each with its keys and their time range (`lo`, `hi`) bound. */
  private async inSlices(sql: string, params: Params, keys: Start[], unit: number): Promise<void> {
    for (const part of slices(keys)) {
      await this.ch.command(sql, { ...params, ...range(part, unit), keys: part.map((k) => new TupleParam([k.exchange, k.pair, k.start / 1000])) }, { idempotent: true });
    }
  }

  /**
   * Hours whose rollups may be missing: those of minutes written after `since` (epoch ms,
   * the processor's last recorded progress). With no progress on record (0: a first start,
   * or new topics over tables that hold history) that bound would be every minute ever
   * written; the hours whose hour or day row is older than their newest minute, or
   * missing, are exactly the ones to compute.
   */
  async writtenSince(since: number): Promise<RollupKey[]> {
    const { tables } = this.family;
    const rows =
      since > 0
        ? await this.ch.query<{ exchange: string; pair: string; hour: number }>(
            `SELECT DISTINCT exchange, pair, toUnixTimestamp(toStartOfHour(minute)) AS hour
             FROM {minutes:Identifier} WHERE closed_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`,
            { minutes: tables.minutes, since },
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
            { minutes: tables.minutes, hours: tables.hours, days: tables.days },
            { join_use_nulls: 0 },
          );
    return rows.map((r) => ({ exchange: r.exchange, pair: r.pair, minute: Number(r.hour) * 1000 }));
  }
}

function unique(keys: RollupKey[], unit: number): Start[] {
  const seen = new Map<string, Start>();
  for (const k of keys) {
    const start = Math.floor(k.minute / unit) * unit;
    const id = `${k.exchange}\u0000${k.pair}\u0000${start}`;
    if (!seen.has(id)) seen.set(id, { exchange: k.exchange, pair: k.pair, start });
  }
  return [...seen.values()];
}

/** Keys in runs of KEYS_PER_STATEMENT, in the tables' order (pair, then exchange), so a run's rows lie together. */
function slices(keys: Start[]): Start[][] {
  if (keys.length <= KEYS_PER_STATEMENT) return [keys];
  const sorted = [...keys].sort((a, b) => (a.pair < b.pair ? -1 : a.pair > b.pair ? 1 : a.exchange < b.exchange ? -1 : a.exchange > b.exchange ? 1 : a.start - b.start));
  const out: Start[][] = [];
  for (let i = 0; i < sorted.length; i += KEYS_PER_STATEMENT) out.push(sorted.slice(i, i + KEYS_PER_STATEMENT));
  return out;
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
