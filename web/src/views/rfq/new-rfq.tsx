// A project's new request for proposals (addendum section 8; docs/rfq.md), saved as a draft
// through POST /v2/organizations/rfqs/ and opened from the request's panel: the asset (of
// the caller's projects), a title, the loan models asked, the exchanges, the loan budget
// and term, what the market maker must deliver (requirements: an `mm` metric and a
// threshold, its direction the metric's default), who is invited, whether proposals are
// sealed until the deadline, and the deadline. The API's words for a problem are shown.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { LOAN_MODELS, type LoanModel } from '../../../../domain/loans/loan.ts';
import { api, unwrap } from '../../api/client';
import { useScope } from '../../api/organizations';
import { Panel } from '../../ui/query-state';
import { KpiRows, kpisOf, type KpiRow } from './kpi-rows';

/** How each loan model reads (docs/loans.md). */
const MODEL_WORDS: Record<LoanModel, string> = { loan_call_option: 'loan with call options', retainer: 'retainer', hybrid: 'hybrid' };

export function NewRfq({ onSaved }: { onSaved: (id: number) => void }) {
  const client = useQueryClient();
  const scope = useScope();
  const assets = scope.data?.projectAssets ?? [];
  const [asset, setAsset] = useState('');
  const [title, setTitle] = useState('');
  const [models, setModels] = useState<LoanModel[]>(['loan_call_option']);
  const [exchanges, setExchanges] = useState<string[]>([]);
  const [quantity, setQuantity] = useState('');
  const [termDays, setTermDays] = useState('90');
  const [requirements, setRequirements] = useState<KpiRow[]>([]);
  const [invited, setInvited] = useState('');
  const [sealed, setSealed] = useState(false);
  const [deadline, setDeadline] = useState('');
  const chosen = asset || assets[0] || '';
  const assetExchanges = [...new Set((scope.data?.pairsOf(chosen) ?? []).map((p) => p.exchange))];
  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/v2/organizations/rfqs/', {
          body: {
            asset: chosen,
            title,
            models,
            exchanges,
            loan_budget: { quantity: Number(quantity) },
            term_days: Number(termDays),
            requirements: kpisOf(requirements),
            invited: invited.split(',').map((s) => s.trim()).filter(Boolean),
            sealed,
            // The browser's local time, sent as an instant.
            deadline: deadline ? new Date(deadline).toISOString() : '',
          },
        }),
      ),
    onSuccess: async (r) => {
      await client.invalidateQueries({ queryKey: ['rfqs'] });
      setTitle('');
      setRequirements([]);
      onSaved(r.id);
    },
  });
  if (assets.length === 0) return null;
  const toggle = <T,>(list: T[], x: T, on: boolean) => (on ? [...list, x] : list.filter((y) => y !== x));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <Panel title="New request" wide>
      <form className="controls rfq-form" aria-label="New request" onSubmit={submit}>
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
        <button type="submit" disabled={save.isPending}>Save the draft</button>
      </form>
      {save.isError && <p role="alert" className="error">{save.error.message}</p>}
      {save.isSuccess && <p role="status">Draft saved: open it from its panel to take proposals.</p>}
    </Panel>
  );
}
