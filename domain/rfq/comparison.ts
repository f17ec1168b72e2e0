// The comparison view's figures of a proposal (addendum section 8; docs/rfq.md,
// "Comparison"): its cost, the intrinsic value of its options at today's price, and
// whether each of the RFQ's requirements is offered at least as strictly. Pure: the price
// and the track record are read elsewhere.
import { DAYS_PER_MONTH, DAYS_PER_YEAR, type Kpi, type PairRef, type Proposal, type Rfq } from './rfq.ts';

export interface Cost {
  /** retainer_fee_usd_month x term_days / 30. */
  retainer_usd: number;
  /** interest_rate_pct / 100 x (loan quantity x price + quote_amount) x term_days / 365; null when the price is unknown and the rate is not 0. */
  interest_usd: number | null;
  /** Their sum; null when the interest is unknown. */
  cost_usd: number | null;
}

export function costOf(p: Pick<Proposal, 'retainer_fee_usd_month' | 'interest_rate_pct' | 'loan'>, termDays: number, price: number | null): Cost {
  const retainer = (p.retainer_fee_usd_month * termDays) / DAYS_PER_MONTH;
  let interest: number | null;
  if (p.interest_rate_pct === 0) interest = 0;
  else if (price === null) interest = null;
  else interest = (p.interest_rate_pct / 100) * (p.loan.quantity * price + p.loan.quote_amount) * (termDays / DAYS_PER_YEAR);
  return { retainer_usd: retainer, interest_usd: interest, cost_usd: interest === null ? null : retainer + interest };
}

/** A tranche's strike for the comparison: a twap_premium tranche's is today's price x (1 + premium/100). */
export function comparisonStrike(t: Proposal['loan']['tranches'][number], price: number): number {
  return t.strike_basis === 'fixed' ? (t.strike_price ?? 0) : price * (1 + (t.premium_pct ?? 0) / 100);
}

/** Sum over the tranches of max(0, price - strike) x quantity; null without a price. */
export function optionValueOf(p: Pick<Proposal, 'loan'>, price: number | null): number | null {
  if (price === null) return null;
  return p.loan.tranches.reduce((s, t) => s + Math.max(0, price - comparisonStrike(t, price)) * t.quantity, 0);
}

export type RequirementStatus = 'met' | 'weaker' | 'missing';

export interface RequirementMet extends Kpi {
  status: RequirementStatus;
  met: boolean;
  /** Per pair the requirement covers: the strictest offered threshold, or null where none is offered. */
  offered: { exchange: string; pair: string; threshold: number | null }[];
}

/** The RFQ pairs a requirement or KPI covers: its pair, or every pair of the RFQ on its exchange, or on `exchanges`. */
export function pairsOf(k: Pick<Kpi, 'exchange' | 'pair'>, rfqPairs: readonly PairRef[], exchanges: readonly string[]): PairRef[] {
  return rfqPairs.filter((p) => (k.exchange === null ? exchanges.includes(p.exchange) : p.exchange === k.exchange) && (k.pair === null || p.pair === k.pair));
}

/** `a` at least as strict as `b` (same direction): above -> a >= b; below -> a <= b. */
export const asStrict = (a: number, b: number, direction: Kpi['direction']) => (direction === 'above' ? a >= b : a <= b);

/**
 * Per requirement: for every RFQ pair it covers, the strictest KPI of the proposal with the
 * same metric and direction covering that pair, in the same session or all hours (a KPI
 * held at all hours holds in every session). `met` when every pair has one at least as
 * strict; `weaker` when every pair has one but some is less strict; `missing` otherwise.
 */
export function requirementsMet(rfq: Pick<Rfq, 'requirements' | 'markets' | 'exchanges'>, p: Pick<Proposal, 'kpis' | 'exchanges'>): RequirementMet[] {
  return rfq.requirements.map((r) => {
    const offers = p.kpis.filter((k) => k.metric === r.metric && k.direction === r.direction && (k.market_hours === null || k.market_hours === r.market_hours));
    const offered = pairsOf(r, rfq.markets, rfq.exchanges).map((pair) => {
      const covering = offers.filter((k) => pairsOf(k, rfq.markets, p.exchanges).some((x) => x.exchange === pair.exchange && x.pair === pair.pair));
      const best = covering.reduce<number | null>((b, k) => (b === null || asStrict(k.threshold, b, r.direction) ? k.threshold : b), null);
      return { ...pair, threshold: best };
    });
    const status: RequirementStatus = offered.some((o) => o.threshold === null)
      ? 'missing'
      : offered.every((o) => asStrict(o.threshold!, r.threshold, r.direction))
        ? 'met'
        : 'weaker';
    return { ...r, status, met: status === 'met', offered };
  });
}
