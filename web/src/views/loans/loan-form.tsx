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
import { useNamedMarketMakers, useScope } from '../../api/organizations';
import { Panel } from '../../ui/query-state';
import { Field, errorFields, messagesOf } from '../../ui/field';
import { CostFields, strikeOf, trancheErrorsOf, TrancheRows, type TrancheRow } from './loan-fields';

/** The API's fields the form shows a control for; the API's words on any other are shown below it. */
const SHOWN = ['market_maker', 'asset', 'model', 'quantity', 'exchanges', 'pairs', 'start_date', 'end_date', 'retainer_fee_usd_month', 'interest_rate_pct', 'tranches'];

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
  const makers = useNamedMarketMakers();
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
      await client.invalidateQueries({ queryKey: ['market makers named'] });
      onSaved(r.id);
    },
  });
  if (assets.length === 0) return null;
  const problems = errorFields(save.error, SHOWN);
  const f = (field: string) => messagesOf(problems.fields[field]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const form = (
    <form className="controls rfq-form" aria-label={draft ? 'Draft loan' : 'New loan'} onSubmit={submit} onChange={() => { if (save.isSuccess) save.reset(); }}>
      <Field label="Asset" errors={f('asset')}>
        {(a) => (
          <select {...a} value={chosen} onChange={(e) => { setAsset(e.target.value); setMarkets([]); }}>
            {assets.map((x) => <option key={x} value={x}>{x}</option>)}
          </select>
        )}
      </Field>
      <Field label="Market maker (slug)" errors={f('market_maker')}>
        {(a) => (
          <>
            {/* The market makers the API has named to the caller offered; any other by its slug. */}
            <input {...a} required list={`${a.id}-makers`} value={maker} onChange={(e) => setMaker(e.target.value)} />
            <datalist id={`${a.id}-makers`}>
              {[...(makers.data ?? [])].map(([slug, name]) => <option key={slug} value={slug}>{name}</option>)}
            </datalist>
          </>
        )}
      </Field>
      <Field label="Model" errors={f('model')}>
        {(a) => (
          <select {...a} value={model} onChange={(e) => setModel(e.target.value as LoanModel)}>
            {LOAN_MODELS.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        )}
      </Field>
      <Field label="Tokens lent" errors={f('quantity')}>
        {(a) => <input {...a} type="number" min="0" step="any" required value={quantity} onChange={(e) => setQuantity(e.target.value)} />}
      </Field>
      <fieldset aria-invalid={f('exchanges').length + f('pairs').length > 0 ? true : undefined}>
        <legend>Markets it makes</legend>
        {f('exchanges').length + f('pairs').length > 0 && <p className="error field-error" role="alert">{[...f('exchanges'), ...f('pairs')].join(' ')}</p>}
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
      <Field label="Starts (UTC day)" errors={f('start_date')}>
        {(a) => <input {...a} type="date" required value={start} onChange={(e) => setStart(e.target.value)} />}
      </Field>
      <Field label="Ends (UTC day)" errors={f('end_date')}>
        {(a) => <input {...a} type="date" required value={end} onChange={(e) => setEnd(e.target.value)} />}
      </Field>
      <CostFields retainer={retainer} onRetainer={setRetainer} interest={interest} onInterest={setInterest} errors={{ retainer: f('retainer_fee_usd_month'), interest: f('interest_rate_pct') }} />
      <TrancheRows rows={tranches} onChange={setTranches} expiry="day" twap="the TWAP at the start" blank={{ quantity: '', basis: 'fixed', strike: '', expiry: '' }} errors={trancheErrorsOf(problems.fields.tranches)} />
      {/* A saved form is not saved twice by a second press: the button waits for a change. */}
      <button type="submit" disabled={save.isPending || save.isSuccess}>{draft ? 'Save the changes' : 'Save the draft loan'}</button>
      {save.isError && problems.general && <p role="alert" className="error">{problems.general}</p>}
      {save.isSuccess && !draft && <p role="status">Draft loan saved: activate it from its panel once it starts.</p>}
    </form>
  );
  return draft ? form : <Panel title="New loan" wide>{form}</Panel>;
}
