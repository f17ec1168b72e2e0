// Trusted depth per minute: a wallet's own orders of a minute (mm_order_minutes) against
// the public mid of the same minute (book_minutes). Either may be written first: the
// market maker's processor joins after writing its minutes, the order-book processor after
// writing its own, and whichever writes second finds the other (each writes, then reads).
// A minute whose public book never comes stays unjoined in mm_order_minutes: no trusted
// depth is made up for it, and it joins if the book's minute is ever written (a replay).
// Joining again rewrites the same values, so every step can be repeated after a crash.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import { LEVELS_BPS } from '../market/facts.ts';
import { trustedDepth } from '../market/families/index.ts';
import { Rollups, type RollupKey } from '../market/repositories/rollups.ts';
import { HOUR_MS, MINUTE_MS } from '../../lib/time.ts';

export class TrustedDepthJoin {
  private readonly rollups: Rollups;

  constructor(private readonly ch: ClickHouse) {
    this.rollups = new Rollups(ch, trustedDepth);
  }

  /**
   * Joins the own-order minutes of these pairs' minutes (`unit` minute) or hours (`unit`
   * hour: a restart's catch-up) with the public mids, then rolls the trusted minutes up.
   */
  async recompute(keys: RollupKey[], unit: 'minute' | 'hour' = 'minute'): Promise<void> {
    if (keys.length === 0) return;
    // Most flushes of the order-book processor, thousands of pairs' minutes, hold no market
    // maker's minute: the own orders (a few pairs) are looked up first, and only their
    // minutes are joined with the books, not every book minute of the flush.
    const scope = minutesOf(keys, unit);
    // Not aliased `minute`: an alias is seen by WHERE, where `minute` is the column.
    const own = await this.ch.query<{ exchange: string; pair: string; at: number }>(
      `SELECT DISTINCT exchange, pair, toUnixTimestamp(minute) AS at FROM mm_order_minutes FINAL WHERE ${scope.where} AND usd_samples > 0`,
      scope.params,
    );
    if (own.length === 0) return;
    const { where, params } = minutesOf(
      own.map((r) => ({ exchange: r.exchange, pair: r.pair, minute: Number(r.at) * 1000 })),
      'minute',
    );
    const joined = await this.ch.query<{ exchange: string; pair: string; minute: number }>(
      `SELECT DISTINCT o.exchange AS exchange, o.pair AS pair, toUnixTimestamp(o.minute) AS minute
       FROM (SELECT exchange, pair, minute FROM mm_order_minutes FINAL WHERE ${where} AND usd_samples > 0) AS o
       INNER JOIN (SELECT exchange, pair, minute FROM book_minutes FINAL WHERE ${where}) AS b
         ON o.exchange = b.exchange AND o.pair = b.pair AND o.minute = b.minute`,
      params,
    );
    // The book of a market maker's minute may not be written yet: nothing to write.
    if (joined.length === 0) return;
    await this.ch.command(
      `INSERT INTO trusted_depth_minutes (exchange, pair, wallet_id, minute, mid, bid_depth, ask_depth, closed_at)
       SELECT o.exchange, o.pair, o.wallet_id, o.minute, b.mid,
         arrayMap(l -> arraySum((p, u) -> if(p >= b.mid * (1 - l / 10000), u, 0.), o.bid_prices, o.bid_usd) / o.usd_samples, {levels:Array(Float64)}),
         arrayMap(l -> arraySum((p, u) -> if(p <= b.mid * (1 + l / 10000), u, 0.), o.ask_prices, o.ask_usd) / o.usd_samples, {levels:Array(Float64)}),
         now64(3)
       FROM (SELECT * FROM mm_order_minutes FINAL WHERE ${where} AND usd_samples > 0) AS o
       INNER JOIN (SELECT exchange, pair, minute, mid FROM book_minutes FINAL WHERE ${where}) AS b
         ON o.exchange = b.exchange AND o.pair = b.pair AND o.minute = b.minute`,
      { ...params, levels: [...LEVELS_BPS] },
      { idempotent: true },
    );
    await this.rollups.recompute(joined.map((r) => ({ exchange: r.exchange, pair: r.pair, minute: Number(r.minute) * 1000 })));
  }
}

/**
 * The condition selecting these keys' minutes (`unit` minute) or hours' minutes (`unit`
 * hour), with its bound values. The hour block bounds the sort key's first column; the
 * minute range narrows within it. The keys reach IN through a subquery: a large bound
 * array of tuples is compared with every row (docs/benchmarks.md, "Measurements behind
 * the code").
 */
function minutesOf(keys: RollupKey[], unit: 'minute' | 'hour'): { where: string; params: Record<string, unknown> } {
  const step = unit === 'minute' ? MINUTE_MS : HOUR_MS;
  const seen = new Map<string, TupleParam>();
  let lo = Infinity;
  let hi = -Infinity;
  for (const k of keys) {
    const start = Math.floor(k.minute / step) * step;
    seen.set(`${k.exchange}\u0000${k.pair}\u0000${start}`, new TupleParam([k.exchange, k.pair, start / 1000]));
    lo = Math.min(lo, start);
    hi = Math.max(hi, start + step);
  }
  const at = unit === 'minute' ? 'minute' : 'toStartOfHour(minute)';
  return {
    where: `toStartOfHour(minute) >= toStartOfHour(toDateTime({lo:UInt32}, 'UTC')) AND toStartOfHour(minute) <= toStartOfHour(toDateTime({hi:UInt32} - 1, 'UTC'))
        AND minute >= toDateTime({lo:UInt32}, 'UTC') AND minute < toDateTime({hi:UInt32}, 'UTC')
        AND (exchange, pair, ${at}) IN (SELECT arrayJoin({keys:Array(Tuple(String, String, DateTime('UTC')))}))`,
    params: { lo: lo / 1000, hi: hi / 1000, keys: [...seen.values()] },
  };
}
