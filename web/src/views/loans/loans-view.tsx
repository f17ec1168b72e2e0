// Loans: the list the API answers the caller (a lender's members its loans, a market maker
// the loans made to it), and one loan with its tranches, valuation (tokens out, option value
// per tranche) and KPI share, with the actions its state allows to a member of the lender.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, num, str, unwrap, type Row } from '../../api/client';
import { useScope } from '../../api/organizations';
import { useSearchParams } from '../../router';
import { fmtNum, fmtPct, fmtPrice, fmtTime, fmtUsd } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column } from '../../ui/table';

const ref = (r: Row, k: string) => (r[k] as { name?: string; slug?: string } | undefined) ?? {};
const ACTIONS: Record<string, string[]> = { draft: ['activate', 'cancel'], active: ['recall'], settlement_due: ['default'] };

export default function LoansView() {
  const [q, set] = useSearchParams();
  const loans = useQuery({ queryKey: ['loans'], queryFn: async () => unwrap(await api.GET('/v2/organizations/loans/')) as unknown as Row[] });
  const selected = Number(q.get('loan')) || null;
  const columns: Column<Row>[] = [
    { key: 'id', label: 'Loan', value: (r) => num(r, 'id'), render: (r) => <a href={`/app/loans?loan=${num(r, 'id')}`} onClick={(e) => { e.preventDefault(); set({ loan: String(num(r, 'id')) }); }}>#{num(r, 'id')} {str(r, 'asset')}</a> },
    { key: 'market_maker', label: 'Market maker', value: (r) => ref(r, 'market_maker').name ?? '' },
    { key: 'lender', label: 'Lender', value: (r) => ref(r, 'organization').name ?? '' },
    { key: 'model', label: 'Model', value: (r) => str(r, 'model') },
    { key: 'status', label: 'Status', value: (r) => str(r, 'status'), render: (r) => <span className="badge">{str(r, 'status')}</span> },
    { key: 'quantity', label: 'Tokens', value: (r) => num(r, 'quantity'), render: (r) => fmtNum(num(r, 'quantity')), numeric: true },
    { key: 'value', label: 'Value out', value: (r) => num(r.valuation as Row, 'value_usd'), render: (r) => fmtUsd(num(r.valuation as Row, 'value_usd')), numeric: true },
    { key: 'kpi', label: 'KPI met', value: (r) => num(r.kpi as Row, 'met_share'), render: (r) => fmtPct(pct(num(r.kpi as Row, 'met_share'))), numeric: true },
  ];
  return (
    <div className="panels">
      <Panel title="Loans" wide>
        <QueryState query={loans} empty={(r) => r.length === 0}>
          {(rows) => <Table caption="Token loans you can see" columns={columns} rows={rows} rowKey={(r) => String(num(r, 'id'))} />}
        </QueryState>
      </Panel>
      {selected && <LoanDetail id={selected} />}
    </div>
  );
}

/** met_share is a fraction 0-1 (docs/loans.md); shown as a percentage. */
const pct = (share: number | null) => (share === null ? null : share * 100);

function LoanDetail({ id }: { id: number }) {
  const queryClient = useQueryClient();
  const scope = useScope();
  const [message, setMessage] = useState<string | null>(null);
  const loan = useQuery({ queryKey: ['loan', id], queryFn: async () => unwrap(await api.GET('/v2/organizations/loans/{id}/', { params: { path: { id } } })) as unknown as Row });
  const act = useMutation({
    mutationFn: async (action: string) => unwrap(await api.POST('/v2/organizations/loans/{id}/actions/', { params: { path: { id } }, body: { action } as never })),
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
        const valuation = (l.valuation ?? {}) as Row;
        const kpi = (l.kpi ?? {}) as Row;
        const perTranche = new Map(((valuation.tranches ?? []) as Row[]).map((t) => [num(t, 'id'), t]));
        const tranches = (Array.isArray(l.tranches) ? l.tranches : []) as Row[];
        const lender = ref(l, 'organization').slug;
        const mine = !!scope.data?.organizations.some((o) => o.slug === lender);
        const actions = mine ? (ACTIONS[str(l, 'status')] ?? []) : [];
        const trancheColumns: Column<Row>[] = [
          { key: 'id', label: 'Tranche', value: (t) => num(t, 'id') },
          { key: 'quantity', label: 'Tokens', value: (t) => num(t, 'quantity'), render: (t) => fmtNum(num(t, 'quantity')), numeric: true },
          { key: 'strike', label: 'Strike', value: (t) => num(perTranche.get(num(t, 'id')), 'strike_price') ?? num(t, 'strike_price'), render: (t) => fmtPrice(num(perTranche.get(num(t, 'id')), 'strike_price') ?? num(t, 'strike_price')), numeric: true },
          { key: 'basis', label: 'Strike basis', value: (t) => str(t, 'strike_basis') },
          { key: 'expires_at', label: 'Expires', value: (t) => str(t, 'expires_at'), render: (t) => fmtTime(str(t, 'expires_at')) },
          { key: 'option', label: 'Option value', value: (t) => num(perTranche.get(num(t, 'id')), 'intrinsic_value_usd'), render: (t) => fmtUsd(num(perTranche.get(num(t, 'id')), 'intrinsic_value_usd')), numeric: true },
          { key: 'settlement', label: 'Settlement', value: (t) => str(t, 'settlement') || 'open' },
        ];
        return (
          <Panel title={`Loan #${id}: ${str(l, 'asset')} to ${ref(l, 'market_maker').name ?? ''}`} wide>
            <dl className="facts">
              <dt>Status</dt><dd>{str(l, 'status')}</dd>
              <dt>Price (24 h TWAP)</dt><dd>{fmtPrice(num(valuation, 'price'))}</dd>
              <dt>Tokens out</dt><dd>{fmtNum(num(valuation, 'tokens_out'))}</dd>
              <dt>Value out</dt><dd>{fmtUsd(num(valuation, 'value_usd'))}</dd>
              <dt>Option value</dt><dd>{fmtUsd(num(valuation, 'intrinsic_value_usd'))}</dd>
              <dt>KPI targets met</dt><dd>{fmtPct(pct(num(kpi, 'met_share')))} of {fmtNum(num(kpi, 'evaluations'))} evaluations ({fmtNum(num(kpi, 'targets'))} targets)</dd>
            </dl>
            <Table caption="Tranches" columns={trancheColumns} rows={tranches} rowKey={(t) => String(num(t, 'id'))} />
            {actions.length > 0 && (
              <div className="actions">
                {actions.map((a) => (
                  <button key={a} type="button" className="secondary" disabled={act.isPending} onClick={() => act.mutate(a)}>
                    {a[0]!.toUpperCase() + a.slice(1)}
                  </button>
                ))}
              </div>
            )}
            {message && <p role="alert" className="error">{message}</p>}
          </Panel>
        );
      }}
    </QueryState>
  );
}
