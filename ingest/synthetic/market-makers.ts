// The demo's market makers: each wallet of the fixture quotes a share of the synthetic
// public book on the pairs its organization covers on the wallet's exchange (mm.orders),
// takes a share of the public trades (mm.fills), and its organization reports the
// volume and depth of the 5 minutes, the hour and the day by the documented method
// (domain/market-makers/reporting.ts), so an honest report equals the trusted value. A
// market maker named in `overstate` reports its depth that many times larger than it
// quotes, so the reconciliation flags it; the others report what they quote.
//
// Restarted (the demo stopped and started again the same day), a market maker has not seen
// the minutes of its open buckets before its start: it leaves a bucket it pushed in its
// earlier run, and that began before its first whole minute, at that run's last push,
// which the reconciliation compares over the minutes that push covered. Pushing it again
// from the minutes since the start would report less than was measured.
import { LEVELS_BPS, levelName } from '../../domain/market/facts.ts';
import { isUsdQuoted } from '../../domain/market/prices.ts';
import { bucketsToReport, reportCut, reportOf, type OwnMinute } from '../../domain/market-makers/reporting.ts';
import { scopeOf } from '../../domain/reference/visibility.ts';
import type { FillMessage, FixtureFile, Level, OrderBookMessage, OwnOrdersMessage, ReportedMessage, TradeMessage } from '../../schemas/index.ts';
import { DAY_MS, MINUTE_MS } from '../../lib/time.ts';

/** Levels of the public book a market maker quotes, and the share of each it holds. */
const QUOTED_LEVELS = 8;

interface Quoter {
  organization: string;
  walletId: number;
  exchange: string;
  pair: string;
  asset: string;
  /** Its share of the public book's levels and trades. */
  share: number;
}

/** One minute of a quoter: its levels' USD summed over its snapshots, the public mids, its fills. */
interface Minute {
  snapshots: number;
  midSum: number;
  mids: number;
  bids: Map<number, number>;
  asks: Map<number, number>;
  volume: number;
}

export class SyntheticMarketMakers {
  private readonly quoters = new Map<string, Quoter[]>();
  /** Per organization, exchange and pair: each of its wallets' minutes (start -> minute) of the current day. */
  private readonly minutes = new Map<string, { quoter: Quoter; wallets: Map<number, Map<number, Minute>> }>();
  /** The first minute seen whole (from the first tick). */
  private firstWholeMinute: number | undefined;

  /**
   * `latenessMs`: the service's lateness. A push covers the minutes that ended that long
   * and a minute before it (domain/market-makers/reporting.ts), which the service has
   * written by then, so an honest report and the measurement cover the same minutes.
   * `pushedBefore`: the buckets pushed before this start (bucketKey), left as pushed.
   */
  constructor(
    fixture: FixtureFile,
    private readonly overstate: Record<string, number> = {},
    private readonly latenessMs = 120_000,
    private readonly pushedBefore: ReadonlySet<string> = new Set(),
  ) {
    const exchanges = (fixture.exchanges ?? []).map((e) => ({ ...e, icon_url: e.icon_url ?? '' }));
    const assets = (fixture.assets ?? []).map((a) => ({ ...a, labels: a.labels ?? [] }));
    const pairs = fixture.pairs ?? [];
    const coverage = (fixture.coverage ?? []).flatMap((c) => c.assets.map((asset) => ({ organization: c.organization, asset, exchanges: c.exchanges ?? [], pairs: c.pairs ?? [] })));
    const organizations = fixture.organizations ?? [];
    (fixture.wallets ?? []).forEach((w, i) => {
      const org = organizations.find((o) => o.slug === w.organization);
      if (!org || org.kind !== 'market_maker') return;
      for (const p of scopeOf(org, { assets, exchanges, pairs, coverage }).pairs) {
        if (p.exchange !== w.exchange || !isUsdQuoted(p.pair)) continue;
        const q: Quoter = { organization: w.organization, walletId: w.id, exchange: p.exchange, pair: p.pair, asset: p.asset, share: 0.15 + 0.1 * (i % 3) };
        const k = `${p.exchange}:${p.pair}`;
        this.quoters.set(k, [...(this.quoters.get(k) ?? []), q]);
      }
    });
  }

  /** The market makers' own orders and fills for one instant of the public market, tallied for their reports. */
  tick(books: readonly OrderBookMessage[], trades: readonly TradeMessage[], now: number): { orders: OwnOrdersMessage[]; fills: FillMessage[] } {
    const orders: OwnOrdersMessage[] = [];
    const fills: FillMessage[] = [];
    this.firstWholeMinute ??= Math.ceil(now / MINUTE_MS) * MINUTE_MS;
    for (const b of books) {
      const best = [b.bids[0]?.[0], b.asks[0]?.[0]];
      if (best[0] === undefined || best[1] === undefined) continue;
      // A crossed snapshot has no mid (addendum section 4); its orders still count.
      const mid = best[0] <= best[1] ? (best[0] + best[1]) / 2 : undefined;
      for (const q of this.quoters.get(`${b.exchange}:${b.pair}`) ?? []) {
        const own = (side: Level[]): Level[] => side.slice(0, QUOTED_LEVELS).map(([p, a]) => [p, Number((a * q.share).toPrecision(6))]);
        const o: OwnOrdersMessage = { organization: q.organization, wallet_id: q.walletId, exchange: q.exchange, pair: q.pair, ts: b.ts, bids: own(b.bids), asks: own(b.asks) };
        orders.push(o);
        const m = this.minute(q, Number(b.ts), now);
        m.snapshots++;
        if (mid !== undefined) {
          m.midSum += mid;
          m.mids++;
        }
        for (const [p, a] of o.bids) m.bids.set(p, (m.bids.get(p) ?? 0) + p * a);
        for (const [p, a] of o.asks) m.asks.set(p, (m.asks.get(p) ?? 0) + p * a);
      }
    }
    for (const tr of trades) {
      for (const q of this.quoters.get(`${tr.exchange}:${tr.pair}`) ?? []) {
        const amount = Number((tr.amount * q.share).toPrecision(6));
        fills.push({ organization: q.organization, wallet_id: q.walletId, exchange: q.exchange, pair: q.pair, ts: tr.ts, price: tr.price, amount, side: tr.side, id: `${tr.id}-${q.walletId}` });
        this.minute(q, Number(tr.ts), now).volume += tr.price * amount;
      }
    }
    return { orders, fills };
  }

  /**
   * What each market maker reports at `now` (its push time): for each interval the bucket
   * holding the last minute the push covers, volume and depth at every level, computed
   * from its wallets' minutes by the documented method. Pushed again later, a bucket's
   * value is replaced; pushed every half minute, each bucket's last push covers it whole.
   */
  reports(now: number): ReportedMessage[] {
    const out: ReportedMessage[] = [];
    for (const { quoter: q, wallets } of this.minutes.values()) {
      const factor = this.overstate[q.organization] ?? 1;
      const minutes = [...wallets.values()].map((byStart) => [...byStart].map(([start, m]): OwnMinute => ({ start, snapshots: m.snapshots, bids: m.bids, asks: m.asks, mid: m.mids > 0 ? m.midSum / m.mids : undefined, volume: m.volume })));
      for (const { interval, start } of bucketsToReport(now, this.latenessMs)) {
        if (start < (this.firstWholeMinute ?? -Infinity) && this.pushedBefore.has(bucketKey(q.organization, q.exchange, q.pair, interval, start))) continue;
        const values = reportOf(minutes, interval, start, now, this.latenessMs);
        if (!values) continue;
        const item = (metric: string, value: number): ReportedMessage => ({ organization: q.organization, asset: q.asset, exchange: q.exchange, pair: q.pair, metric, interval, timestamp: start, value });
        out.push(item('volume/volume', values.volume));
        LEVELS_BPS.forEach((l, i) => {
          const bid = values.bid[i];
          const ask = values.ask[i];
          if (bid !== null && bid !== undefined) out.push(item(`depth/bid_${levelName(l)}bps`, factor * bid));
          if (ask !== null && ask !== undefined) out.push(item(`depth/ask_${levelName(l)}bps`, factor * ask));
        });
      }
    }
    return out;
  }

  /** A quoter's minute of `ts`; minutes of days before the one being reported are dropped. */
  private minute(q: Quoter, ts: number, now: number): Minute {
    const k = `${q.organization}:${q.exchange}:${q.pair}`;
    let series = this.minutes.get(k);
    if (!series) {
      series = { quoter: q, wallets: new Map() };
      this.minutes.set(k, series);
    }
    let byStart = series.wallets.get(q.walletId);
    if (!byStart) {
      byStart = new Map();
      series.wallets.set(q.walletId, byStart);
    }
    const start = Math.floor(ts / MINUTE_MS) * MINUTE_MS;
    let m = byStart.get(start);
    if (!m) {
      const keepFrom = Math.floor((reportCut(now, this.latenessMs) - MINUTE_MS) / DAY_MS) * DAY_MS;
      for (const s of byStart.keys()) if (s < keepFrom) byStart.delete(s);
      m = { snapshots: 0, midSum: 0, mids: 0, bids: new Map(), asks: new Map(), volume: 0 };
      byStart.set(start, m);
    }
    return m;
  }
}

/** A reported bucket's key in SyntheticMarketMakers' `pushedBefore`. */
export function bucketKey(organization: string, exchange: string, pair: string, interval: string, start: number): string {
  return [organization, exchange, pair, interval, start].join('\u0000');
}
