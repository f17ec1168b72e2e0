// A synthetic market for the demo: per asset a random-walk USD price, per pair a book of
// 20 levels a side around it with a pair-specific spread and depth, trades on both sides,
// and funding and open interest for perpetuals. Seeded, so a run can be repeated.
import { USD_QUOTES } from '../../domain/market/prices.ts';
import type { DerivativesMessage, Level, OrderBookMessage, TradeMessage } from '../../schemas/index.ts';

export interface SyntheticPair {
  exchange: string;
  pair: string;
  asset: string;
  market_type: 'spot' | 'perp';
}

export interface MarketTick {
  books: OrderBookMessage[];
  trades: TradeMessage[];
  derivatives: DerivativesMessage[];
}

const KNOWN_PRICES: Record<string, number> = { BTC: 60_000, ETH: 3_000, SOL: 150 };

/** mulberry32: small, fast, good enough for test data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

interface PairState {
  p: SyntheticPair;
  base: string;
  quote: string;
  /** Typical half-spread and level step, in bps, and typical USD per level. */
  halfSpreadBps: number;
  stepBps: number;
  levelUsd: number;
  openInterestUsd: number;
  funding: number;
  tradeSeq: number;
}

/** An asset's USD price when the synthetic market starts (then it walks). */
export function startingUsdPrice(sym: string): number {
  return USD_QUOTES.has(sym) ? 1 : (KNOWN_PRICES[sym] ?? 0.05 + (hash(sym) % 5000) / 100);
}

export class SyntheticMarket {
  private readonly random: () => number;
  private readonly usd = new Map<string, number>();
  private readonly pairs: PairState[];

  constructor(pairs: SyntheticPair[], seed = 42) {
    this.random = rng(seed);
    this.pairs = pairs.map((p) => {
      const [base = p.asset, quote = 'USDT'] = p.pair.split('/');
      const r = rng(hash(`${p.exchange}:${p.pair}`));
      return {
        p,
        base,
        quote,
        halfSpreadBps: 0.5 + r() * 8,
        stepBps: 0.5 + r() * 4,
        levelUsd: 2_000 + r() * 40_000,
        openInterestUsd: 1e6 + r() * 5e7,
        funding: (r() - 0.4) * 0.0005,
        tradeSeq: 0,
      };
    });
    for (const s of this.pairs) {
      for (const sym of [s.base.replace(/_PERP$/, ''), s.quote]) {
        if (!this.usd.has(sym)) this.usd.set(sym, startingUsdPrice(sym));
      }
    }
  }

  private gauss(): number {
    // Box-Muller
    const u = Math.max(this.random(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.random());
  }

  /** Advances prices by dtMs and returns the messages of that instant. */
  tick(nowMs: number, dtMs = 1000): MarketTick {
    const vol = 0.0004 * Math.sqrt(dtMs / 1000);
    for (const [sym, price] of this.usd) {
      if (!USD_QUOTES.has(sym)) this.usd.set(sym, price * Math.exp(vol * this.gauss()));
    }
    const out: MarketTick = { books: [], trades: [], derivatives: [] };
    for (const s of this.pairs) {
      const baseUsd = this.usd.get(s.base.replace(/_PERP$/, '')) ?? 1;
      const quoteUsd = this.usd.get(s.quote) ?? 1;
      const mid = baseUsd / quoteUsd;
      const half = s.halfSpreadBps * (0.6 + this.random() * 0.8);
      const bids: Level[] = [];
      const asks: Level[] = [];
      for (let i = 0; i < 20; i++) {
        const off = (half + i * s.stepBps * (0.7 + this.random() * 0.6)) / 1e4;
        const bidPrice = round(mid * (1 - off));
        const askPrice = round(mid * (1 + off));
        const usdSize = () => s.levelUsd * (0.2 + this.random() * 1.6) * (1 + i / 10);
        bids.push([bidPrice, round(usdSize() / (bidPrice * quoteUsd))]);
        asks.push([askPrice, round(usdSize() / (askPrice * quoteUsd))]);
      }
      out.books.push({ exchange: s.p.exchange, pair: s.p.pair, ts: nowMs, bids, asks });
      const trades = Math.floor(this.random() * 4);
      for (let k = 0; k < trades; k++) {
        const side = this.random() < 0.5 ? 'buy' : 'sell';
        const price = side === 'buy' ? asks[0]![0] : bids[0]![0];
        out.trades.push({
          exchange: s.p.exchange,
          pair: s.p.pair,
          ts: nowMs - Math.floor(this.random() * dtMs),
          price,
          amount: round((200 + this.random() * 5000) / (price * quoteUsd)),
          side,
          id: `${s.p.exchange}-${s.p.pair}-${nowMs}-${s.tradeSeq++}`,
        });
      }
      if (s.p.market_type === 'perp' && nowMs % 10_000 < dtMs) {
        s.funding += (this.random() - 0.5) * 0.00002;
        s.openInterestUsd *= Math.exp(0.01 * this.gauss());
        out.derivatives.push({ exchange: s.p.exchange, pair: s.p.pair, ts: nowMs, funding_rate_8h: s.funding, usd_open_interest: Math.round(s.openInterestUsd) });
      }
    }
    return out;
  }
}

/** Six significant digits: what exchanges print. */
function round(x: number): number {
  return Number(x.toPrecision(6));
}
