// The demo's market makers: each wallet of the fixture quotes a share of the synthetic
// public book on the pairs its organization covers on the wallet's exchange (mm.orders),
// takes a share of the public trades (mm.fills), and its organization reports the day's
// and the current 5 minutes' volume and depth (mm.reported). A market maker named
// `overstate` reports its depth that many times larger than what it quotes, so the
// reconciliation flags it; the others report what they quote.
import { LEVELS_BPS, levelName } from '../../domain/market/facts.ts';
import { scopeOf } from '../../domain/reference/visibility.ts';
import type { FillMessage, FixtureFile, Level, OrderBookMessage, OwnOrdersMessage, ReportedMessage, TradeMessage } from '../../schemas/index.ts';

const STABLE_QUOTES = new Set(['USD', 'USDT', 'USDC', 'FDUSD', 'DAI']);
const DAY = 86_400_000;
const FIVE_MINUTES = 300_000;
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

/** One minute of a quoter: its levels' USD summed over the snapshots, the public mids, its fills. */
interface Minute {
  snapshots: number;
  midSum: number;
  bids: Map<number, number>;
  asks: Map<number, number>;
  volume: number;
}

const MINUTE = 60_000;

export class SyntheticMarketMakers {
  private readonly quoters = new Map<string, Quoter[]>();
  /** Per organization, exchange and pair: its minutes (start -> minute) of the current day. */
  private readonly minutes = new Map<string, { quoter: Quoter; byStart: Map<number, Minute> }>();

  /**
   * `reportAfterMs`: a minute is reported once this long past its end, when the service has
   * written it (the processors' lateness and a margin), so an honest report and the
   * measurement cover the same minutes. Depth is computed as the service computes trusted
   * depth, against the mean public mid of each minute, so an honest report equals it.
   */
  constructor(
    fixture: FixtureFile,
    private readonly overstate: Record<string, number> = {},
    private readonly reportAfterMs = 180_000,
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
        if (p.exchange !== w.exchange || !STABLE_QUOTES.has(p.pair.split('/')[1] ?? '')) continue;
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
    for (const b of books) {
      const best = [b.bids[0]?.[0], b.asks[0]?.[0]];
      if (best[0] === undefined || best[1] === undefined) continue;
      const mid = (best[0] + best[1]) / 2;
      for (const q of this.quoters.get(`${b.exchange}:${b.pair}`) ?? []) {
        const own = (side: Level[]): Level[] => side.slice(0, QUOTED_LEVELS).map(([p, a]) => [p, Number((a * q.share).toPrecision(6))]);
        const o: OwnOrdersMessage = { organization: q.organization, wallet_id: q.walletId, exchange: q.exchange, pair: q.pair, ts: b.ts, bids: own(b.bids), asks: own(b.asks) };
        orders.push(o);
        const m = this.minute(q, Number(b.ts), now);
        m.snapshots++;
        m.midSum += mid;
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
   * What each market maker reports at `now`: the day (`1d`) and the current 5 minutes
   * (`5m`) so far, over the minutes past `reportAfterMs`: volume, and depth at every level
   * as the mean over minutes. Pushed again later, a bucket's value is replaced.
   */
  reports(now: number): ReportedMessage[] {
    const out: ReportedMessage[] = [];
    const cutoff = now - this.reportAfterMs;
    const dayStart = Math.floor(cutoff / DAY) * DAY;
    const fiveStart = Math.floor(cutoff / FIVE_MINUTES) * FIVE_MINUTES;
    for (const { quoter: q, byStart } of this.minutes.values()) {
      const factor = this.overstate[q.organization] ?? 1;
      for (const [interval, from] of [['1d', dayStart], ['5m', fiveStart]] as const) {
        const done = [...byStart].filter(([start]) => start >= from && start + MINUTE <= cutoff).map(([, m]) => m);
        const withOrders = done.filter((m) => m.snapshots > 0);
        if (done.length === 0) continue;
        const item = (metric: string, value: number): ReportedMessage => ({ organization: q.organization, asset: q.asset, exchange: q.exchange, pair: q.pair, metric, interval, timestamp: from, value });
        out.push(item('volume/volume', done.reduce((v, m) => v + m.volume, 0)));
        if (withOrders.length === 0) continue;
        LEVELS_BPS.forEach((l, i) => {
          const depth = (side: 'bids' | 'asks') =>
            withOrders.reduce((sum, m) => {
              const mid = m.midSum / m.snapshots;
              let usd = 0;
              for (const [p, v] of m[side]) if (side === 'bids' ? p >= mid * (1 - l / 1e4) : p <= mid * (1 + l / 1e4)) usd += v;
              return sum + usd / m.snapshots;
            }, 0) / withOrders.length;
          out.push(item(`depth/bid_${levelName(l)}bps`, factor * depth('bids')));
          out.push(item(`depth/ask_${levelName(l)}bps`, factor * depth('asks')));
        });
      }
    }
    return out;
  }

  /** A quoter's minute of `ts`; minutes of earlier days are dropped. */
  private minute(q: Quoter, ts: number, now: number): Minute {
    const k = `${q.organization}:${q.exchange}:${q.pair}`;
    let series = this.minutes.get(k);
    if (!series) {
      series = { quoter: q, byStart: new Map() };
      this.minutes.set(k, series);
    }
    const start = Math.floor(ts / MINUTE) * MINUTE;
    let m = series.byStart.get(start);
    if (!m) {
      const keepFrom = Math.floor((now - this.reportAfterMs) / DAY) * DAY;
      for (const s of series.byStart.keys()) if (s < keepFrom) series.byStart.delete(s);
      m = { snapshots: 0, midSum: 0, bids: new Map(), asks: new Map(), volume: 0 };
      series.byStart.set(start, m);
    }
    return m;
  }
}
