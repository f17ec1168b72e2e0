// A market maker's proposal to an open request (addendum section 8; docs/rfq.md), sent
// through POST /v2/organizations/rfqs/<id>/proposals/: the loan model (of those asked), the
// tokens borrowed in tranches (each a strike, fixed or a premium over the 24-hour TWAP, and
// its days to expiry), the retainer and interest, the KPIs offered (the request's
// requirements to start from), how long the offer stands, and notes. Its live proposal is
// withdrawn from here too. The API's words for a problem are shown.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { LoanModel } from '../../../../domain/loans/loan.ts';
import { api, unwrap, type Schemas } from '../../api/client';
import { KpiRows, kpisOf, type KpiRow } from './kpi-rows';
import { CostFields, strikeOf, TrancheRows, type TrancheRow } from '../loans/loan-fields';

export function ProposalForm({ rfq, makers }: { rfq: Schemas['Rfq']; makers: { slug: string; name: string }[] }) {
  const client = useQueryClient();
  const [maker, setMaker] = useState(makers[0]?.slug ?? '');
  const [model, setModel] = useState<LoanModel>(rfq.models[0] as LoanModel);
  const [quantity, setQuantity] = useState(String(rfq.loan_budget.quantity));
  const [tranches, setTranches] = useState<TrancheRow[]>([{ quantity: String(rfq.loan_budget.quantity), basis: 'fixed', strike: '', expiry: String(rfq.term_days) }]);
  const [retainer, setRetainer] = useState('0');
  const [interest, setInterest] = useState('0');
  const [kpis, setKpis] = useState<KpiRow[]>(rfq.requirements.map((r) => ({ metric: r.metric, threshold: String(r.threshold) })));
  const [validUntil, setValidUntil] = useState('');
  const [notes, setNotes] = useState('');
  const send = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v2/organizations/rfqs/{id}/proposals/', {
          params: { path: { id: rfq.id } },
          body: {
            market_maker: maker,
            model,
            loan: {
              quantity: Number(quantity),
              tranches: tranches.map((t) => ({
                quantity: Number(t.quantity),
                strike_basis: t.basis,
                ...strikeOf(t),
                expires_after_days: Number(t.expiry),
              })),
            },
            retainer_fee_usd_month: Number(retainer),
            interest_rate_pct: Number(interest),
            kpis: kpisOf(kpis),
            // The browser's local time, sent as an instant.
            valid_until: validUntil ? new Date(validUntil).toISOString() : '',
            ...(notes ? { notes } : {}),
          },
        }),
      ),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['proposals', rfq.id] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    send.mutate();
  };
  return (
    <form className="controls rfq-form" aria-label="Your proposal" onSubmit={submit}>
      {makers.length > 1 && (
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
      <button type="submit" disabled={send.isPending}>Send the proposal</button>
      {send.isError && <p role="alert" className="error">{send.error.message}</p>}
      {send.isSuccess && <p role="status">Proposal sent.</p>}
    </form>
  );
}
