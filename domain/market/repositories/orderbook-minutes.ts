// Reads of the stored per-minute order-book rows (operators' view; the market endpoints
// read through partials.ts and uptime.ts).
import type { ClickHouse } from '../../../lib/clickhouse.ts';

export interface OrderBookMinute {
  exchange: string;
  pair: string;
  minute: string;
  samples: number;
  mid: number;
  spread_abs: number;
  spread_bps: number;
  spread_bps_max: number;
  best_bid: number;
  best_bid_amount: number;
  best_ask: number;
  best_ask_amount: number;
  tick: number | null;
}

export class OrderBookMinuteRepository {
  constructor(private readonly ch: ClickHouse) {}

  async minutes(q: { exchange: string; pair: string; from: Date; to: Date; limit: number }): Promise<OrderBookMinute[]> {
    const rows = await this.ch.query<OrderBookMinute & { minute_iso: string }>(
      `SELECT exchange, pair, formatDateTime(minute, '%Y-%m-%dT%H:%i:%SZ', 'UTC') AS minute_iso, samples, mid,
              spread_abs, spread_bps, spread_bps_max,
              top.2 AS best_bid, top.3 AS best_bid_amount, top.4 AS best_ask, top.5 AS best_ask_amount, tick
       FROM book_minutes FINAL
       WHERE exchange = {exchange:String} AND pair = {pair:String}
         AND minute >= toDateTime({from:Int64}, 'UTC') AND minute < toDateTime({to:Int64}, 'UTC')
       ORDER BY minute
       LIMIT {limit:UInt32}`,
      { exchange: q.exchange, pair: q.pair, from: Math.floor(q.from.getTime() / 1000), to: Math.ceil(q.to.getTime() / 1000), limit: q.limit },
    );
    return rows.map(({ minute_iso, ...r }) => ({ ...r, minute: minute_iso, samples: Number(r.samples) }));
  }
}
