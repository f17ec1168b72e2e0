// A market maker's proposal to an open request (addendum section 8; docs/rfq.md), sent
// through POST /v2/organizations/rfqs/<id>/proposals/: the loan model (of those asked), the
// tokens borrowed in tranches (each a strike, fixed or a premium over the 24-hour TWAP, and
// its days to expiry), the retainer and interest, the KPIs offered (the request's
// requirements to start from), how long the offer stands, and notes. A live proposal is
// revised with the same form, its terms to start from (PATCH ... {action: revise}: a new
// version). The API's words for a problem are shown.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { LoanModel } from '../../../../domain/loans/loan.ts';
import { api, unwrap, type Schemas } from '../../api/client';
import { KpiRows, kpiRowsOf, kpisOf, type KpiRow } from './kpi-rows';
import { localInput } from '../../ui/format';
import { CostFields, strikeOf, TrancheRows, type TrancheRow } from '../loans/loan-fields';

/** The terms of a proposal as the API answers them (revised from). */
type Proposed = Pick<Schemas['Proposal'], 'id' | 'model' | 'loan' | 'retainer_fee_usd_month' | 'interest_rate_pct' | 'kpis' | 'valid_until' | 'notes'>;

export function ProposalForm({ rfq, makers, revising }: { rfq: Schemas['Rfq']; makers: { slug: string; name: string }[]; revising?: Proposed }) {
  const client = useQueryClient();
  const [maker, setMaker] = useState(makers[0]?.slug ?? '');
  const [model, setModel] = useState<LoanModel>((revising?.model ?? rfq.models[0]) as LoanModel);
  const [quantity, setQuantity] = useState(String(revising?.loan.quantity ?? rfq.loan_budget.quantity));
  const [tranches, setTranches] = useState<TrancheRow[]>(
    revising
      ? revising.loan.tranches.map((t) => ({ quantity: String(t.quantity), basis: t.strike_basis as TrancheRow['basis'], strike: String((t.strike_basis === 'fixed' ? t.strike_price : t.premium_pct) ?? ''), expiry: String(t.expires_after_days) }))
      : [{ quantity: String(rfq.loan_budget.quantity), basis: 'fixed', strike: '', expiry: String(rfq.term_days) }],
  );
  const [retainer, setRetainer] = useState(String(revising?.retainer_fee_usd_month ?? 0));
  const [interest, setInterest] = useState(String(revising?.interest_rate_pct ?? 0));
  const [kpis, setKpis] = useState<KpiRow[]>(kpiRowsOf(revising?.kpis ?? rfq.requirements));
  const [validUntil, setValidUntil] = useState(revising ? localInput(revising.valid_until) : '');
  const [notes, setNotes] = useState(revising?.notes ?? '');
  const send = useMutation({
    mutationFn: async () => {
      const terms = {
        model,
        loan: {
          quantity: Number(quantity),
          tranches: tranches.map((t) => ({ quantity: Number(t.quantity), strike_basis: t.basis, ...strikeOf(t), expires_after_days: Number(t.expiry) })),
        },
        retainer_fee_usd_month: Number(retainer),
        interest_rate_pct: Number(interest),
        kpis: kpisOf(kpis),
        // The browser's local time, sent as an instant.
        valid_until: validUntil ? new Date(validUntil).toISOString() : '',
        ...(notes ? { notes } : {}),
      };
      if (revising) return unwrap(await api.PATCH('/v2/organizations/rfqs/{id}/proposals/{pid}/', { params: { path: { id: rfq.id, pid: revising.id } }, body: { action: 'revise', ...terms } }));
      return unwrap(await api.POST('/v2/organizations/rfqs/{id}/proposals/', { params: { path: { id: rfq.id } }, body: { market_maker: maker, ...terms } }));
    },
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['proposals', rfq.id] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    send.mutate();
  };
  return (
    <form className="controls rfq-form" aria-label={revising ? 'Revise your proposal' : 'Your proposal'} onSubmit={submit}>
      {!revising && makers.length > 1 && (
        <label>
          For
          <select value={maker} onChange={(e) => setMaker(e.target.value)}>
            {makers.map((m) => <option key={m.slug} value={m.slug}>{m.name}</option>)}
          </select>
        </label>
      )}
      <label>
        Loan model
        <select value={model} onChange={(e) => setModel(e.target.value as LoanModel)}>
          {rfq.models.map((m) => <option key={m} value={m}>{m}</option>)}
        </select>
      </label>
      <label>
        Tokens borrowed
        <input type="number" min="0" step="any" required value={quantity} onChange={(e) => setQuantity(e.target.value)} />
      </label>
      <TrancheRows rows={tranches} onChange={setTranches} expiry="days" twap="the 24-hour TWAP" blank={{ quantity: '', basis: 'fixed', strike: '', expiry: String(rfq.term_days) }} />
      <CostFields retainer={retainer} onRetainer={setRetainer} interest={interest} onInterest={setInterest} />
      <KpiRows legend="KPIs offered" noun="KPI" rows={kpis} onChange={setKpis} />
      <label>
        Valid until (your local time)
        <input type="datetime-local" required value={validUntil} onChange={(e) => setValidUntil(e.target.value)} />
      </label>
      <label>
        Notes
        <textarea maxLength={10000} value={notes} onChange={(e) => setNotes(e.target.value)} />
      </label>
      <button type="submit" disabled={send.isPending}>{revising ? 'Send the revision' : 'Send the proposal'}</button>
      {send.isError && <p role="alert" className="error">{send.error.message}</p>}
      {send.isSuccess && <p role="status">{revising ? 'Revision sent.' : 'Proposal sent.'}</p>}
    </form>
  );
}
