// A loan as the endpoints show it (addendum section 7): its terms, what the service keeps
// (status, history, start_twap, fixed strikes) and the read-only valuation and kpi.
import type { Loan } from '../../../domain/loans/loan.ts';
import type { Kpi, Valuation } from '../../../domain/loans/valuation.ts';
import type { Organization } from '../../../domain/reference/repository.ts';
import { presentOrganization } from '../../presenters.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const org = (slug: string, organizations: ReadonlyMap<string, Organization>) => presentOrganization(organizations.get(slug) ?? { slug, name: slug });

export function presentLoan(l: Loan, organizations: ReadonlyMap<string, Organization>, valuation: Valuation, kpi: Kpi) {
  return {
    id: l.id,
    organization: org(l.organization, organizations),
    market_maker: org(l.market_maker, organizations),
    asset: l.asset,
    model: l.model,
    quantity: l.quantity,
    quote_amount: l.quote_amount,
    retainer_fee_usd_month: l.retainer_fee_usd_month,
    interest_rate_pct: l.interest_rate_pct,
    settlement_asset: l.settlement_asset,
    collateral: l.collateral,
    exchanges: l.exchanges,
    pairs: l.pairs,
    start_date: iso(l.start_date),
    end_date: iso(l.end_date),
    tranches: l.tranches.map((t) => ({
      id: t.id,
      quantity: t.quantity,
      disbursed_at: iso(t.disbursed_at),
      strike_basis: t.strike_basis,
      strike_price: t.strike_price,
      premium_pct: t.premium_pct,
      expires_at: iso(t.expires_at),
      settlement: t.settlement,
      settled_quantity: t.settled_quantity,
    })),
    start_twap: l.start_twap,
    status: l.status,
    history: l.history.map((h) => ({ status: h.status, at: iso(h.at), by: h.by })),
    valuation: { ...valuation, as_of: iso(valuation.as_of) },
    kpi: { ...kpi, since: iso(kpi.since) },
    rfq: l.rfq,
    created_at: iso(l.created_at),
  };
}
