// The mids a quote rate table saw (domain/market/prices.ts), saved by the books' processor
// with its progress and loaded at a start (schemas/clickhouse/011_quote_mids.sql).
import type { ClickHouse } from '../../../lib/clickhouse.ts';
import type { QuoteMid } from '../prices.ts';

export class QuoteMidRepository {
  constructor(
    private readonly ch: ClickHouse,
    /** When a mid is saved: it is kept a week after that. */
    private readonly now: () => number,
  ) {}

  /** Saving the same mids again (a retried flush) leaves one of each. */
  async insert(mids: readonly QuoteMid[]): Promise<void> {
    if (mids.length === 0) return;
    await this.ch.insert('quote_mids', mids.map((m) => ({ exchange: m.exchange, pair: m.pair, ts: m.ts, mid: m.mid, saved_at: Math.floor(this.now() / 1000) })));
  }

  /** The mids of the last `keepMs` of event time before the newest saved (and the last one of each pair before that), oldest first. */
  async recent(keepMs: number): Promise<QuoteMid[]> {
    const rows = await this.ch.query<{ exchange: string; pair: string; at: number | string; price: number }>(
      `WITH (SELECT max(ts) FROM quote_mids) - toIntervalMillisecond({keep:UInt64}) AS cut
       SELECT exchange, pair, toUnixTimestamp64Milli(ts) AS at, mid AS price FROM quote_mids FINAL WHERE ts >= cut
       UNION ALL
       SELECT exchange, pair, toUnixTimestamp64Milli(max(ts)) AS at, argMax(mid, ts) AS price FROM quote_mids FINAL WHERE ts < cut GROUP BY exchange, pair
       ORDER BY at`,
      { keep: keepMs },
    );
    return rows.map((r) => ({ exchange: r.exchange, pair: r.pair, ts: Number(r.at), mid: r.price }));
  }
}
