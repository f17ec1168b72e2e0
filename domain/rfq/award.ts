// Awarding an RFQ (addendum section 8; docs/rfq.md, "Award"): the RFQ becomes `awarded`,
// the proposal `accepted`, every other live proposal `rejected`, and a `draft` loan with
// the proposal's terms and inactive `mm` targets for its KPIs are made. All or nothing,
// also across a crash:
//   1. ids are allocated (an id lost to a crash is only a gap);
//   2. the targets are written in one insert, marked with the award's commit
//      (batch_id 'award:<commit>'): invisible until an agreements row carries the commit;
//   3. the RFQ, the proposals and the loan are written in ONE insert, each row with the
//      commit: this insert is the award, and it makes the targets count.
// A crash before 3 leaves targets nobody sees and nothing else; after 3, everything.
// The caller holds the agreements lock; this takes the targets lock inside it (that order
// only, so the two cannot deadlock with a targets batch).
import type { AgreementRecord, AgreementStore } from '../agreements/store.ts';
import type { LockSource } from '../../lib/locks.ts';
import { draftLoan, loanRecord, type LoanTerms } from '../loans/loan.ts';
import type { TargetDefinition, TargetRepository } from '../targets/repository.ts';
import { asStrict, pairsOf } from './comparison.ts';
import { LIVE_PROPOSAL, nextProposal, nextRfq, proposalRecord, rfqRecord, type Proposal, type Rfq } from './rfq.ts';
import { DAY_MS } from '../../lib/time.ts';

/** The settlement asset of an awarded loan (the proposal does not name one); PATCH the draft loan to change it. */
export const AWARD_SETTLEMENT_ASSET = 'USDT';

export interface AwardDeps {
  store: AgreementStore;
  targets: TargetRepository;
  ids: { next(sequence: string, floor: number): Promise<number> };
  locks: LockSource;
  /** Test-only: called between the targets' insert and the award's (a crash point). */
  betweenWrites?: () => void | Promise<void>;
}

export interface AwardResult {
  rfq: Rfq;
  proposal: Proposal;
  rejected: Proposal[];
  loan: number;
  targets: (TargetDefinition & { id: number })[];
  /** KPI targets not made because a live target of the same key exists. */
  skipped: (TargetDefinition & { existing_id: number })[];
  commit: string;
}

/** The draft loan's terms: the proposal's loan, model, fees and exchanges; the RFQ's asset, pairs and term; starting at the award. */
export function loanTermsOf(rfq: Rfq, p: Proposal, start: number): LoanTerms {
  return {
    market_maker: p.market_maker,
    asset: rfq.asset,
    model: p.model,
    quantity: p.loan.quantity,
    quote_amount: p.loan.quote_amount,
    retainer_fee_usd_month: p.retainer_fee_usd_month,
    interest_rate_pct: p.interest_rate_pct,
    settlement_asset: AWARD_SETTLEMENT_ASSET,
    collateral: null,
    exchanges: [...p.exchanges],
    pairs: [...new Set(rfq.markets.filter((x) => p.exchanges.includes(x.exchange)).map((x) => x.pair))],
    start_date: start,
    end_date: start + rfq.term_days * DAY_MS,
    tranches: p.loan.tranches.map((t, i) => ({
      id: i + 1,
      quantity: t.quantity,
      disbursed_at: start,
      strike_basis: t.strike_basis,
      strike_price: t.strike_basis === 'fixed' ? t.strike_price : null,
      premium_pct: t.strike_basis === 'twap_premium' ? t.premium_pct : null,
      expires_at: start + t.expires_after_days * DAY_MS,
      settlement: null,
      settled_quantity: null,
    })),
  };
}

/** The key a target is matched by (addendum section 6): one live target per key. */
const targetKey = (t: Pick<TargetDefinition, 'type' | 'organization' | 'asset' | 'exchange' | 'pair' | 'metric' | 'market_hours'>): string =>
  [t.type, t.organization, t.asset, t.exchange, t.pair, t.metric, t.market_hours ?? ''].join('\u0000');

/** The inactive mm targets of a proposal's KPIs: a KPI without exchange or pair covers every RFQ pair on the proposal's exchanges. */
export function kpiTargets(rfq: Rfq, p: Proposal): TargetDefinition[] {
  const out = new Map<string, TargetDefinition>();
  for (const k of p.kpis) {
    for (const pair of pairsOf(k, rfq.markets, p.exchanges)) {
      const t: TargetDefinition = {
        type: 'mm',
        organization: p.market_maker,
        asset: rfq.asset,
        exchange: pair.exchange,
        pair: pair.pair,
        metric: k.metric,
        threshold: k.threshold,
        direction: k.direction,
        // Activated with the loan (docs/rfq.md): an agreement not yet in force is not evaluated.
        active: false,
        telegram_notifications: false,
        scaling_mode: 'legacy',
        scaling_enabled: false,
        scaling_source: 'manual',
        scaling_reference_price: 0,
        market_hours: k.market_hours,
      };
      // Two KPIs of one key (one for every pair, a stricter one on an exchange): the strictest,
      // as the comparison reads the offer (requirementsMet). Validation refuses two directions.
      const before = out.get(targetKey(t));
      if (!before || asStrict(t.threshold, before.threshold, t.direction)) out.set(targetKey(t), t);
    }
  }
  return [...out.values()];
}

/**
 * Writes the award of `proposal` (already checked by the caller, under the agreements
 * lock, against the records as they are) at `at` by user `by`.
 */
export async function writeAward(d: AwardDeps, rfq: Rfq, proposal: Proposal, others: readonly Proposal[], at: number, by: number, commit: string): Promise<AwardResult> {
  return d.locks.with('targets:batch', async () => {
    const loanId = await d.ids.next('loans', await d.store.maxId('loan'));
    const existing = await d.targets.all();
    const live = new Map(existing.map((t) => [targetKey(t), t.id]));
    const wanted = kpiTargets(rfq, proposal);
    const skipped: AwardResult['skipped'] = [];
    const create: (TargetDefinition & { id: number })[] = [];
    const floor = await d.targets.maxId();
    for (const t of wanted) {
      const clash = live.get(targetKey(t));
      if (clash !== undefined) skipped.push({ ...t, existing_id: clash });
      else create.push({ ...t, id: await d.ids.next('targets', floor) });
    }
    await d.targets.applyBatch({ deleteIds: [], create, by, at, awardCommit: commit });
    await d.betweenWrites?.();

    const change = { at, by, commit };
    const awarded = nextRfq(rfq, 'awarded', at, by, { awarded_proposal: proposal.id, loan: loanId });
    const accepted = nextProposal(proposal, 'accepted', at, by);
    const rejected = others.filter((o) => o.id !== proposal.id && LIVE_PROPOSAL.includes(o.status)).map((o) => nextProposal(o, 'rejected', at, by));
    // The loan names its KPI targets: they go active with it (domain/loans/award-targets.ts).
    const loan = { ...draftLoan(loanId, rfq.organization, loanTermsOf(rfq, proposal, at), at, by, rfq.id), award_targets: create.map((t) => t.id) };
    const records: AgreementRecord<unknown>[] = [rfqRecord(awarded, change), proposalRecord(accepted, change), ...rejected.map((o) => proposalRecord(o, change)), loanRecord(loan, change)];
    await d.store.write(records);
    return { rfq: awarded, proposal: accepted, rejected, loan: loanId, targets: create, skipped, commit };
  });
}
