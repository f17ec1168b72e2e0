// Loans: the list the API answers the caller (a lender's members its loans, a market maker
// the loans made to it), and one loan with its tranches, valuation (tokens out, option value
// per tranche) and KPI share, with the actions its state allows to a member of the lender
// (the domain's rule), a tranche's settlement among them (returned or exercised), and a
// draft's terms changed.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, itemsOf, unwrap, type Schemas } from '../../api/client';
import { useScope } from '../../api/organizations';
import { useSearchParams } from '../../router';
import { fmtNum, fmtPct, fmtPrice, fmtTime, fmtUsd } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { pick, Select } from '../../ui/choices';
import { Table, type Column } from '../../ui/table';
import { LoanForm } from './loan-form';
import { ConfirmButton } from '../../ui/confirm-button';
import { actionAllowed, LOAN_ACTIONS, LOAN_STATUSES, SETTLEMENTS, termsEditable, type LoanAction, type LoanStatus, type Settlement } from '../../../../domain/loans/loan.ts';

type Loan = Schemas['Loan'];
type Tranche = Loan['tranches'][number];
/** The loan's own actions (a tranche's settlement is asked per tranche). */
type Action = Exclude<LoanAction, 'settle_tranche'>;
const LOAN_WIDE: readonly Action[] = LOAN_ACTIONS.filter((a): a is Action => a !== 'settle_tranche');

export default function LoansView() {
  const [q, set] = useSearchParams();
  // One status, or all; the API filters (statuses).
  const status = pick(['all', ...LOAN_STATUSES], q.get('status'), 'all');
  const query = status === 'all' ? {} : { statuses: [status] };
  const loans = useQuery({ queryKey: ['loans', query], queryFn: async () => itemsOf(unwrap(await api.GET('/v2/organizations/loans/', { params: { query } }))) });
  const selected = Number(q.get('loan')) || null;
  const columns: Column<Loan>[] = [
    { key: 'id', label: 'Loan', value: (r) => r.id, render: (r) => <a href={`/app/loans?loan=${r.id}`} onClick={(e) => { e.preventDefault(); set({ loan: String(r.id) }); }}>#{r.id} {r.asset}</a> },
    { key: 'market_maker', label: 'Market maker', value: (r) => r.market_maker.name },
    { key: 'lender', label: 'Lender', value: (r) => r.organization.name },
    { key: 'model', label: 'Model', value: (r) => r.model },
    { key: 'status', label: 'Status', value: (r) => r.status, render: (r) => <span className="badge">{r.status}</span> },
    { key: 'quantity', label: 'Tokens', value: (r) => r.quantity, render: (r) => fmtNum(r.quantity), numeric: true },
    { key: 'value', label: 'Value out', value: (r) => r.valuation.value_usd, render: (r) => fmtUsd(r.valuation.value_usd), numeric: true },
    { key: 'kpi', label: 'KPI met', value: (r) => r.kpi.met_share, render: (r) => fmtPct(pct(r.kpi.met_share)), numeric: true },
  ];
  return (
    <div className="panels">
      <Panel title="Loans" wide>
        <form className="controls" aria-label="Loan filters" onSubmit={(e) => e.preventDefault()}>
          <Select label="Status" value={status} options={['all', ...LOAN_STATUSES]} onChange={(v) => set({ status: v === 'all' ? null : v })} />
        </form>
        <QueryState query={loans} empty={(r) => r.length === 0} emptyText={status === 'all' ? 'No loans yet.' : `No ${status} loans.`}>
          {(rows) => <Table caption="Token loans you can see" columns={columns} rows={rows} rowKey={(r) => String(r.id)} />}
        </QueryState>
      </Panel>
      {selected && <LoanDetail key={selected} id={selected} />}
      <LoanForm onSaved={(id) => set({ loan: String(id) })} />
    </div>
  );
}

/** met_share is a fraction 0-1 (docs/loans.md); shown as a percentage. */
const pct = (share: number | null) => (share === null ? null : share * 100);

function LoanDetail({ id }: { id: number }) {
  const queryClient = useQueryClient();
  const scope = useScope();
  const [message, setMessage] = useState<string | null>(null);
  /** Whether the lender's draft is being changed, and was. */
  const [editing, setEditing] = useState(false);
  const [changed, setChanged] = useState(false);
  const loan = useQuery({ queryKey: ['loan', id], queryFn: async () => unwrap(await api.GET('/v2/organizations/loans/{id}/', { params: { path: { id } } })) });
  const act = useMutation({
    mutationFn: async (body: { action: Action } | { action: 'settle_tranche'; tranche_id: number; settlement: Settlement; settled_quantity: number }) =>
      unwrap(await api.POST('/v2/organizations/loans/{id}/actions/', { params: { path: { id } }, body })),
    onSuccess: () => {
      setMessage(null);
      void queryClient.invalidateQueries({ queryKey: ['loan', id] });
      void queryClient.invalidateQueries({ queryKey: ['loans'] });
    },
    onError: (e) => setMessage(e.message),
  });
  return (
    <QueryState query={loan}>
      {(l) => {
        const { valuation, kpi } = l;
        const perTranche = new Map(valuation.tranches.map((t) => [t.id, t]));
        // The valuation's strike where it has one, else the tranche's.
        const strike = (t: Tranche) => perTranche.get(t.id)?.strike_price ?? t.strike_price;
        const mine = !!scope.data?.organizations.some((o) => o.slug === l.organization.slug);
        const status = l.status as LoanStatus;
        const actions = mine ? LOAN_WIDE.filter((a) => actionAllowed(a, status)) : [];
        const settling = mine && actionAllowed('settle_tranche', status);
        const editable = mine && termsEditable(status);
        const trancheColumns: Column<Tranche>[] = [
          { key: 'id', label: 'Tranche', value: (t) => t.id },
          { key: 'quantity', label: 'Tokens', value: (t) => t.quantity, render: (t) => fmtNum(t.quantity), numeric: true },
          { key: 'strike', label: 'Strike', value: strike, render: (t) => fmtPrice(strike(t)), numeric: true },
          { key: 'basis', label: 'Strike basis', value: (t) => t.strike_basis, render: (t) => (t.strike_basis === 'twap_premium' ? `TWAP ${(t.premium_pct ?? 0) >= 0 ? '+' : ''}${fmtPct(t.premium_pct)}` : 'fixed') },
          { key: 'expires_at', label: 'Expires (UTC)', value: (t) => t.expires_at, render: (t) => fmtTime(t.expires_at) },
          { key: 'option', label: 'Option value', value: (t) => perTranche.get(t.id)?.intrinsic_value_usd ?? null, render: (t) => fmtUsd(perTranche.get(t.id)?.intrinsic_value_usd ?? null), numeric: true },
          { key: 'settlement', label: 'Settlement', value: (t) => t.settlement ?? 'open' },
          ...(settling
            ? [{ key: 'settle', label: 'Settle', value: () => null, render: (t: Tranche) => (t.settlement ? null : <SettleTranche tranche={t} busy={act.isPending} onSettle={(settlement, quantity) => act.mutate({ action: 'settle_tranche', tranche_id: t.id, settlement, settled_quantity: quantity })} />) }]
            : []),
        ];
        return (
          <Panel title={`Loan #${id}: ${l.asset} to ${l.market_maker.name}`} wide>
            <dl className="facts">
              <dt>Status</dt><dd>{l.status}</dd>
              <dt>Model</dt><dd>{l.model}</dd>
              <dt>Term (UTC)</dt><dd>{fmtTime(l.start_date)} to {fmtTime(l.end_date)}</dd>
              <dt>Markets</dt><dd>{l.pairs.length > 0 ? l.pairs.join(', ') : 'every pair'} on {l.exchanges.length > 0 ? l.exchanges.join(', ') : 'every exchange'}</dd>
              <dt>Retainer</dt><dd>{fmtUsd(l.retainer_fee_usd_month)} a month</dd>
              <dt>Interest</dt><dd>{fmtPct(l.interest_rate_pct)} a year</dd>
              <dt>Price (24 h TWAP)</dt><dd>{fmtPrice(valuation.price)}</dd>
              <dt>Tokens out</dt><dd>{fmtNum(valuation.tokens_out)}</dd>
              <dt>Value out</dt><dd>{fmtUsd(valuation.value_usd)}</dd>
              <dt>Option value</dt><dd>{fmtUsd(valuation.intrinsic_value_usd)}</dd>
              <dt>KPI targets met</dt><dd>{fmtPct(pct(kpi.met_share))} of {fmtNum(kpi.evaluations)} evaluations ({fmtNum(kpi.targets)} {kpi.targets === 1 ? 'target' : 'targets'})</dd>
            </dl>
            <Table caption="Tranches" columns={trancheColumns} rows={l.tranches} rowKey={(t) => String(t.id)} />
            {(actions.length > 0 || editable) && (
              <div className="actions">
                {editable && <button type="button" className="secondary" aria-expanded={editing} onClick={() => { setEditing(!editing); setChanged(false); }}>Change the draft</button>}
                {actions.map((a) => {
                  const word = a[0]!.toUpperCase() + a.slice(1);
                  // Activating is what a draft is for; every other move ends something.
                  return a === 'activate' ? (
                    <button key={a} type="button" className="secondary" disabled={act.isPending} onClick={() => act.mutate({ action: a })}>{word}</button>
                  ) : (
                    <ConfirmButton key={a} label={word} disabled={act.isPending} onConfirm={() => act.mutate({ action: a })} />
                  );
                })}
              </div>
            )}
            {editable && editing && <LoanForm draft={l} onSaved={() => { setEditing(false); setChanged(true); }} />}
            {changed && <p role="status">Draft changed.</p>}
            {message && <p role="alert" className="error">{message}</p>}
          </Panel>
        );
      }}
    </QueryState>
  );
}

/** A tranche's settlement: the tokens returned, or the option exercised, and how many (all by default). */
function SettleTranche({ tranche, busy, onSettle }: { tranche: Tranche; busy: boolean; onSettle: (settlement: Settlement, quantity: number) => void }) {
  const [settlement, setSettlement] = useState<Settlement>('returned');
  const [quantity, setQuantity] = useState(String(tranche.quantity));
  return (
    <span className="actions" role="group" aria-label={`Settle tranche ${tranche.id}`}>
      <select aria-label="Settlement" value={settlement} onChange={(e) => setSettlement(e.target.value as Settlement)}>
        {SETTLEMENTS.map((x) => <option key={x} value={x}>{x}</option>)}
      </select>
      <input aria-label="Tokens settled" type="number" min="0" step="any" value={quantity} onChange={(e) => setQuantity(e.target.value)} />
      <ConfirmButton label={`Settle tranche ${tranche.id}`} disabled={busy} onConfirm={() => onSettle(settlement, Number(quantity))} />
    </span>
  );
}
