// A project's token loan to a market maker (addendum section 7; docs/loans.md): a new one
// saved as a draft through POST /v2/organizations/loans/, and a draft's terms changed
// through PATCH /v2/organizations/loans/<id>/ (the same form, the draft's terms to start
// from); it is activated from its panel. The asset (of the caller's projects), the market
// maker (by its slug), the model, the tokens lent, the markets it makes (exchanges and pairs
// of the asset), its dates, the retainer and interest, and its tranches (each a strike,
// fixed or a premium over the TWAP at the start, and its expiry). The API's words for a
// problem are shown.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { LOAN_MODELS, type LoanModel, type StrikeBasis } from '../../../../domain/loans/loan.ts';
import { api, unwrap, type Schemas } from '../../api/client';
import { useScope } from '../../api/organizations';
import { Panel } from '../../ui/query-state';
import { CostFields, strikeOf, TrancheRows, type TrancheRow } from './loan-fields';

type Loan = Schemas['Loan'];

/** An instant's UTC day, as a date input holds it. */
const dayOf = (iso: string) => iso.slice(0, 10);

/** The draft's terms as the form's rows. */
const trancheRowsOf = (l: Loan): TrancheRow[] =>
  l.tranches.map((t) => ({
    quantity: String(t.quantity),
    basis: t.strike_basis as StrikeBasis,
    strike: String((t.strike_basis === 'fixed' ? t.strike_price : t.premium_pct) ?? ''),
    expiry: dayOf(t.expires_at),
    ...(t.disbursed_at !== l.start_date && { disbursed: t.disbursed_at }),
  }));

/** A new loan's form, or a draft's (`draft`). */
export function LoanForm({ draft, onSaved }: { draft?: Loan; onSaved: (id: number) => void }) {
  const client = useQueryClient();
  const scope = useScope();
  const assets = scope.data?.projectAssets ?? [];
  const [asset, setAsset] = useState(draft?.asset ?? '');
  const [maker, setMaker] = useState(draft?.market_maker.slug ?? '');
  const [model, setModel] = useState<LoanModel>((draft?.model as LoanModel | undefined) ?? 'loan_call_option');
  const [quantity, setQuantity] = useState(draft ? String(draft.quantity) : '');
  const [markets, setMarkets] = useState<string[]>(draft ? draft.exchanges.flatMap((x) => draft.pairs.map((p) => `${x} ${p}`)) : []);
  const [start, setStart] = useState(draft ? dayOf(draft.start_date) : '');
  const [end, setEnd] = useState(draft ? dayOf(draft.end_date) : '');
  const [retainer, setRetainer] = useState(String(draft?.retainer_fee_usd_month ?? 0));
  const [interest, setInterest] = useState(String(draft?.interest_rate_pct ?? 0));
  const [tranches, setTranches] = useState<TrancheRow[]>(draft ? trancheRowsOf(draft) : [{ quantity: '', basis: 'fixed', strike: '', expiry: '' }]);
  const chosen = asset || assets[0] || '';
  const pairs = scope.data?.pairsOf(chosen) ?? [];
  // A day left as the draft had it keeps the draft's instant (a time of day the API was
  // given); another is the day's start in UTC.
  const kept = new Map(draft ? [draft.start_date, draft.end_date, ...draft.tranches.map((t) => t.expires_at)].map((iso) => [dayOf(iso), iso]) : []);
  const instantOf = (day: string) => (day ? (kept.get(day) ?? `${day}T00:00:00Z`) : '');
  const save = useMutation({
    mutationFn: async () => {
      const picked = pairs.filter((p) => markets.includes(`${p.exchange} ${p.pair}`));
      const body = {
        market_maker: maker.trim(),
        asset: chosen,
        model,
        quantity: Number(quantity),
        exchanges: [...new Set(picked.map((p) => p.exchange))],
        pairs: [...new Set(picked.map((p) => p.pair))],
        start_date: instantOf(start),
        end_date: instantOf(end),
        retainer_fee_usd_month: Number(retainer),
        interest_rate_pct: Number(interest),
        tranches: tranches.map((t) => ({
          quantity: Number(t.quantity),
          strike_basis: t.basis,
          ...strikeOf(t),
          expires_at: instantOf(t.expiry),
          ...(t.disbursed && { disbursed_at: t.disbursed }),
        })),
      };
      if (!draft) return unwrap(await api.POST('/v2/organizations/loans/', { body }));
      return unwrap(await api.PATCH('/v2/organizations/loans/{id}/', { params: { path: { id: draft.id } }, body }));
    },
    onSuccess: async (r) => {
      await client.invalidateQueries({ queryKey: ['loans'] });
      await client.invalidateQueries({ queryKey: ['loan', r.id] });
      onSaved(r.id);
    },
  });
  if (assets.length === 0) return null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const form = (
    <form className="controls rfq-form" aria-label={draft ? 'Draft loan' : 'New loan'} onSubmit={submit} onChange={() => { if (save.isSuccess) save.reset(); }}>
      <label>
        Asset
        <select value={chosen} onChange={(e) => { setAsset(e.target.value); setMarkets([]); }}>
          {assets.map((a) => <option key={a} value={a}>{a}</option>)}
        </select>
      </label>
      <label>
        Market maker (slug)
        <input required value={maker} onChange={(e) => setMaker(e.target.value)} />
      </label>
      <label>
        Model
        <select value={model} onChange={(e) => setModel(e.target.value as LoanModel)}>
          {LOAN_MODELS.map((m) => <option key={m} value={m}>{m}</option>)}
        </select>
      </label>
      <label>
        Tokens lent
        <input type="number" min="0" step="any" required value={quantity} onChange={(e) => setQuantity(e.target.value)} />
      </label>
      <fieldset>
        <legend>Markets it makes</legend>
        {pairs.map((p) => {
          const k = `${p.exchange} ${p.pair}`;
          return (
            <label key={k} className="check">
              <input type="checkbox" checked={markets.includes(k)} onChange={(e) => setMarkets(e.target.checked ? [...markets, k] : markets.filter((x) => x !== k))} />
              {scope.data?.exchangeName(p.exchange) ?? p.exchange} {p.pair}
            </label>
          );
        })}
      </fieldset>
      <label>
        Starts (UTC day)
        <input type="date" required value={start} onChange={(e) => setStart(e.target.value)} />
      </label>
      <label>
        Ends (UTC day)
        <input type="date" required value={end} onChange={(e) => setEnd(e.target.value)} />
      </label>
      <CostFields retainer={retainer} onRetainer={setRetainer} interest={interest} onInterest={setInterest} />
      <TrancheRows rows={tranches} onChange={setTranches} expiry="day" twap="the TWAP at the start" blank={{ quantity: '', basis: 'fixed', strike: '', expiry: '' }} />
      {/* A saved form is not saved twice by a second press: the button waits for a change. */}
      <button type="submit" disabled={save.isPending || save.isSuccess}>{draft ? 'Save the changes' : 'Save the draft loan'}</button>
      {save.isError && <p role="alert" className="error">{save.error.message}</p>}
      {save.isSuccess && !draft && <p role="status">Draft loan saved: activate it from its panel once it starts.</p>}
    </form>
  );
  return draft ? form : <Panel title="New loan" wide>{form}</Panel>;
}
