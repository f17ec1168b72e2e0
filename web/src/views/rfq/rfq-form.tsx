// A project's request for proposals (addendum section 8; docs/rfq.md): a new one saved as a
// draft through POST /v2/organizations/rfqs/, and a draft's terms changed through PATCH
// /v2/organizations/rfqs/<id>/ (the same form, the draft's terms to start from); it is
// opened from the request's panel. The asset (of the caller's projects), a title and
// description, the loan models asked, the exchanges, the loan budget and term, what the
// market maker must deliver (requirements: an `mm` metric and a threshold, its direction
// the metric's default), who is invited, whether proposals are sealed until the deadline,
// and the deadline. The API's words for a problem are shown.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { LOAN_MODELS, type LoanModel } from '../../../../domain/loans/loan.ts';
import { api, unwrap, type Schemas } from '../../api/client';
import { useScope } from '../../api/organizations';
import { localInput } from '../../ui/format';
import { Panel } from '../../ui/query-state';
import { KpiRows, kpiRowsOf, kpisOf, type KpiRow } from './kpi-rows';

/** How each loan model reads (docs/loans.md). */
const MODEL_WORDS: Record<LoanModel, string> = { loan_call_option: 'loan with call options', retainer: 'retainer', hybrid: 'hybrid' };

/** A new request's form, or a draft's (`draft`). */
export function RfqForm({ draft, onSaved }: { draft?: Schemas['Rfq']; onSaved: (id: number) => void }) {
  const client = useQueryClient();
  const scope = useScope();
  const assets = scope.data?.projectAssets ?? [];
  const [asset, setAsset] = useState(draft?.asset ?? '');
  const [title, setTitle] = useState(draft?.title ?? '');
  const [description, setDescription] = useState(draft?.description ?? '');
  const [models, setModels] = useState<LoanModel[]>((draft?.models as LoanModel[] | undefined) ?? ['loan_call_option']);
  const [exchanges, setExchanges] = useState<string[]>(draft?.exchanges ?? []);
  const [quantity, setQuantity] = useState(draft ? String(draft.loan_budget.quantity) : '');
  const [termDays, setTermDays] = useState(String(draft?.term_days ?? 90));
  const [requirements, setRequirements] = useState<KpiRow[]>(draft ? kpiRowsOf(draft.requirements) : []);
  const [invited, setInvited] = useState(draft?.invited.join(', ') ?? '');
  const [sealed, setSealed] = useState(draft?.sealed ?? false);
  const [deadline, setDeadline] = useState(draft ? localInput(draft.deadline) : '');
  const chosen = asset || assets[0] || '';
  const assetPairs = scope.data?.pairsOf(chosen) ?? [];
  const assetExchanges = [...new Set(assetPairs.map((p) => p.exchange))];
  // A draft asking every pair of its exchanges (the default) asks every pair of the exchanges
  // chosen now; one narrowed to some pairs keeps them.
  const everyPair = (d: Schemas['Rfq']) => {
    const all = new Set(assetPairs.filter((p) => d.exchanges.includes(p.exchange)).map((p) => p.pair));
    return d.pairs.length === all.size && d.pairs.every((p) => all.has(p));
  };
  const save = useMutation({
    mutationFn: async () => {
      const body = {
        asset: chosen,
        title,
        description,
        models,
        exchanges,
        loan_budget: { quantity: Number(quantity), ...(draft && { quote_amount: draft.loan_budget.quote_amount }) },
        term_days: Number(termDays),
        requirements: kpisOf(requirements),
        invited: invited.split(',').map((s) => s.trim()).filter(Boolean),
        sealed,
        // The browser's local time, sent as an instant.
        deadline: deadline ? new Date(deadline).toISOString() : '',
      };
      if (!draft) return unwrap(await api.POST('/v2/organizations/rfqs/', { body }));
      const pairs = draft.asset === chosen && !everyPair(draft) ? {} : { pairs: [] };
      return unwrap(await api.PATCH('/v2/organizations/rfqs/{id}/', { params: { path: { id: draft.id } }, body: { ...body, ...pairs } }));
    },
    onSuccess: async (r) => {
      await client.invalidateQueries({ queryKey: ['rfqs'] });
      if (!draft) {
        setTitle('');
        setDescription('');
        setRequirements([]);
      }
      onSaved(r.id);
    },
  });
  if (assets.length === 0) return null;
  const toggle = <T,>(list: T[], x: T, on: boolean) => (on ? [...list, x] : list.filter((y) => y !== x));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const form = (
    <form className="controls rfq-form" aria-label={draft ? 'Draft request' : 'New request'} onSubmit={submit} onChange={() => { if (save.isSuccess) save.reset(); }}>
      <label>
        Asset
        <select value={chosen} onChange={(e) => { setAsset(e.target.value); setExchanges([]); }}>
          {assets.map((a) => <option key={a} value={a}>{a}</option>)}
        </select>
      </label>
      <label>
        Title
        <input required maxLength={200} value={title} onChange={(e) => setTitle(e.target.value)} />
      </label>
      <label>
        Description
        <textarea maxLength={10000} value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <fieldset>
        <legend>Loan models asked</legend>
        {LOAN_MODELS.map((m) => (
          <label key={m} className="check">
            <input type="checkbox" checked={models.includes(m)} onChange={(e) => setModels(toggle(models, m, e.target.checked))} />
            {MODEL_WORDS[m]}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Exchanges</legend>
        {assetExchanges.map((x) => (
          <label key={x} className="check">
            <input type="checkbox" checked={exchanges.includes(x)} onChange={(e) => setExchanges(toggle(exchanges, x, e.target.checked))} />
            {scope.data?.exchangeName(x) ?? x}
          </label>
        ))}
      </fieldset>
      <label>
        Tokens to lend at most
        <input type="number" min="0" step="any" required value={quantity} onChange={(e) => setQuantity(e.target.value)} />
      </label>
      <label>
        Term (days)
        <input type="number" min="1" max="3650" step="1" required value={termDays} onChange={(e) => setTermDays(e.target.value)} />
      </label>
      <KpiRows legend="Requirements" noun="Requirement" rows={requirements} onChange={setRequirements} />
      <label>
        Invited market makers (slugs, comma-separated; none: any)
        <input value={invited} onChange={(e) => setInvited(e.target.value)} />
      </label>
      <label className="check">
        <input type="checkbox" checked={sealed} onChange={(e) => setSealed(e.target.checked)} />
        Sealed: proposals hidden until the deadline
      </label>
      <label>
        Deadline (your local time)
        <input type="datetime-local" required value={deadline} onChange={(e) => setDeadline(e.target.value)} />
      </label>
      {/* A saved form is not saved twice by a second press: the button waits for a change. */}
      <button type="submit" disabled={save.isPending || save.isSuccess}>{draft ? 'Save the changes' : 'Save the draft'}</button>
      {save.isError && <p role="alert" className="error">{save.error.message}</p>}
      {save.isSuccess && !draft && <p role="status">Draft saved: open it from its panel to take proposals.</p>}
    </form>
  );
  return draft ? form : <Panel title="New request" wide>{form}</Panel>;
}
