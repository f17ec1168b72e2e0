// An RFQ and a proposal as the endpoints show them (addendum section 8; docs/rfq.md):
// times as ISO 8601, organizations as references, all hours as `market_hours: null`.
import type { Organization } from '../../../domain/reference/repository.ts';
import type { AwardResult } from '../../../domain/rfq/award.ts';
import { acceptsProposals, type Kpi, type Proposal, type Rfq } from '../../../domain/rfq/rfq.ts';
import { presentOrganization } from '../../presenters.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const org = (slug: string, organizations: ReadonlyMap<string, Organization>) => presentOrganization(organizations.get(slug) ?? { slug, name: slug });
const kpi = (k: Kpi) => ({ metric: k.metric, exchange: k.exchange, pair: k.pair, threshold: k.threshold, direction: k.direction, market_hours: k.market_hours });

export function presentRfq(q: Rfq, organizations: ReadonlyMap<string, Organization>, now: number) {
  return {
    id: q.id,
    organization: org(q.organization, organizations),
    asset: q.asset,
    title: q.title,
    description: q.description,
    models: q.models,
    exchanges: q.exchanges,
    pairs: q.pairs,
    markets: q.markets,
    loan_budget: q.loan_budget,
    term_days: q.term_days,
    requirements: q.requirements.map(kpi),
    invited: q.invited,
    sealed: q.sealed,
    deadline: iso(q.deadline),
    status: q.status,
    accepting_proposals: acceptsProposals(q, now),
    awarded_proposal: q.awarded_proposal,
    loan: q.loan,
    version: q.version,
    history: q.history.map((h) => ({ status: h.status, at: iso(h.at), by: h.by })),
    created_at: iso(q.created_at),
  };
}

export function presentProposal(p: Proposal, organizations: ReadonlyMap<string, Organization>) {
  return {
    id: p.id,
    rfq: p.rfq,
    market_maker: org(p.market_maker, organizations),
    model: p.model,
    loan: { quantity: p.loan.quantity, quote_amount: p.loan.quote_amount, tranches: p.loan.tranches.map((t) => ({ ...t })) },
    retainer_fee_usd_month: p.retainer_fee_usd_month,
    interest_rate_pct: p.interest_rate_pct,
    kpis: p.kpis.map(kpi),
    exchanges: p.exchanges,
    notes: p.notes,
    valid_until: iso(p.valid_until),
    version: p.version,
    status: p.status,
    history: p.history.map((h) => ({ status: h.status, at: iso(h.at), by: h.by })),
    created_at: iso(p.created_at),
    // Every version is a status change or a revision, each with its history entry.
    updated_at: iso(p.history.at(-1)?.at ?? p.created_at),
  };
}

/** The award's answer: the RFQ, the accepted proposal, the rejected ones, the draft loan and the KPI targets made or skipped. */
export function presentAward(a: AwardResult, organizations: ReadonlyMap<string, Organization>, now: number) {
  return {
    rfq: presentRfq(a.rfq, organizations, now),
    proposal: presentProposal(a.proposal, organizations),
    rejected: a.rejected.map((p) => p.id),
    loan: { id: a.loan, status: 'draft' },
    targets: a.targets.map((t) => ({ id: t.id, organization: t.organization, asset: t.asset, exchange: t.exchange, pair: t.pair, metric: t.metric, threshold: t.threshold, direction: t.direction, market_hours: t.market_hours, active: t.active })),
    skipped_targets: a.skipped.map((t) => ({ existing_id: t.existing_id, exchange: t.exchange, pair: t.pair, metric: t.metric, market_hours: t.market_hours })),
  };
}
