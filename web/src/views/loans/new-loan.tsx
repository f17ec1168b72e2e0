// A project's new token loan to a market maker (addendum section 7; docs/loans.md), saved as
// a draft through POST /v2/organizations/loans/ and activated from its panel: the asset (of
// the caller's projects), the market maker (by its slug), the model, the tokens lent, the
// markets it makes (exchanges and pairs of the asset), its dates, the retainer and interest,
// and its tranches (each a strike, fixed or a premium over the TWAP at the start, and its
// expiry). The API's words for a problem are shown.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { LOAN_MODELS, type LoanModel } from '../../../../domain/loans/loan.ts';
import { api, unwrap } from '../../api/client';
import { useScope } from '../../api/organizations';
import { Panel } from '../../ui/query-state';
import { CostFields, strikeOf, TrancheRows, type TrancheRow } from './loan-fields';

/** A date input's day as the instant of its start in UTC. */
const dayStart = (day: string) => (day ? `${day}T00:00:00Z` : '');

export function NewLoan({ onSaved }: { onSaved: (id: number) => void }) {
  const client = useQueryClient();
  const scope = useScope();
  const assets = scope.data?.projectAssets ?? [];
  const [asset, setAsset] = useState('');
  const [maker, setMaker] = useState('');
  const [model, setModel] = useState<LoanModel>('loan_call_option');
  const [quantity, setQuantity] = useState('');
  const [markets, setMarkets] = useState<string[]>([]);
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [retainer, setRetainer] = useState('0');
  const [interest, setInterest] = useState('0');
  const [tranches, setTranches] = useState<TrancheRow[]>([{ quantity: '', basis: 'fixed', strike: '', expiry: '' }]);
  const chosen = asset || assets[0] || '';
  const pairs = scope.data?.pairsOf(chosen) ?? [];
  const save = useMutation({
    mutationFn: async () => {
      const picked = pairs.filter((p) => markets.includes(`${p.exchange} ${p.pair}`));
      return unwrap(
        await api.POST('/v2/organizations/loans/', {
          body: {
            market_maker: maker.trim(),
            asset: chosen,
            model,
            quantity: Number(quantity),
            exchanges: [...new Set(picked.map((p) => p.exchange))],
            pairs: [...new Set(picked.map((p) => p.pair))],
            start_date: dayStart(start),
            end_date: dayStart(end),
            retainer_fee_usd_month: Number(retainer),
            interest_rate_pct: Number(interest),
            tranches: tranches.map((t) => ({
              quantity: Number(t.quantity),
              strike_basis: t.basis,
              ...strikeOf(t),
              expires_at: dayStart(t.expiry),
            })),
          },
        }),
      );
    },
    onSuccess: async (r) => {
      await client.invalidateQueries({ queryKey: ['loans'] });
      onSaved(r.id);
    },
  });
  if (assets.length === 0) return null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <Panel title="New loan" wide>
      <form className="controls rfq-form" aria-label="New loan" onSubmit={submit}>
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
        <button type="submit" disabled={save.isPending}>Save the draft loan</button>
      </form>
      {save.isError && <p role="alert" className="error">{save.error.message}</p>}
      {save.isSuccess && <p role="status">Draft loan saved: activate it from its panel once it starts.</p>}
    </Panel>
  );
}
