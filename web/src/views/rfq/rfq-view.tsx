// RFQ: the requests the caller sees, and one request's proposals side by side (cost,
// option value, requirements met, the market maker's measured track record), with the
// project's shortlist and award. A market maker sees only its own proposals, as the API answers.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { api, num, str, unwrap, type Row } from '../../api/client';
import { useScope } from '../../api/organizations';
import { useSearchParams } from '../../router';
import { fmtNum, fmtPct, fmtTime, fmtUsd } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column } from '../../ui/table';

const name = (r: Row, k: string) => (r[k] as { name?: string; slug?: string } | undefined)?.name ?? str(r, k);

export default function RfqView() {
  const [q, set] = useSearchParams();
  const rfqs = useQuery({ queryKey: ['rfqs'], queryFn: async () => unwrap(await api.GET('/v2/organizations/rfqs/')) as unknown as Row[] });
  const selected = Number(q.get('rfq')) || null;
  const columns: Column<Row>[] = [
    { key: 'title', label: 'Request', value: (r) => str(r, 'title'), render: (r) => <a href={`/app/rfq?rfq=${num(r, 'id')}`} onClick={(e) => { e.preventDefault(); set({ rfq: String(num(r, 'id')) }); }}>{str(r, 'title') || `#${num(r, 'id')}`}</a> },
    { key: 'asset', label: 'Asset', value: (r) => str(r, 'asset') },
    { key: 'project', label: 'Project', value: (r) => name(r, 'organization') },
    { key: 'status', label: 'Status', value: (r) => str(r, 'status'), render: (r) => <span className="badge">{str(r, 'status')}</span> },
    { key: 'deadline', label: 'Deadline', value: (r) => str(r, 'deadline'), render: (r) => fmtTime(str(r, 'deadline')) },
    { key: 'sealed', label: 'Sealed', value: (r) => (r.sealed ? 'yes' : 'no') },
  ];
  return (
    <div className="panels">
      <Panel title="Requests for proposals" wide>
        <QueryState query={rfqs} empty={(r) => r.length === 0}>
          {(rows) => <Table caption="Requests you can see" columns={columns} rows={rows} rowKey={(r) => String(num(r, 'id'))} />}
        </QueryState>
      </Panel>
      {selected && <Proposals id={selected} rfq={rfqs.data?.find((r) => num(r, 'id') === selected)} />}
    </div>
  );
}

function Proposals({ id, rfq }: { id: number; rfq: Row | undefined }) {
  const queryClient = useQueryClient();
  const scope = useScope();
  const [message, setMessage] = useState<string | null>(null);
  const proposals = useQuery({ queryKey: ['proposals', id], queryFn: async () => unwrap(await api.GET('/v2/organizations/rfqs/{id}/proposals/', { params: { path: { id } } })) as unknown as Row[] });
  const project = (rfq?.organization as { slug?: string } | undefined)?.slug;
  const mine = !!scope.data?.organizations.some((o) => o.slug === project);
  const done = () => {
    setMessage(null);
    void queryClient.invalidateQueries({ queryKey: ['proposals', id] });
    void queryClient.invalidateQueries({ queryKey: ['rfqs'] });
  };
  const shortlist = useMutation({
    mutationFn: async (pid: number) => unwrap(await api.PATCH('/v2/organizations/rfqs/{id}/proposals/{pid}/', { params: { path: { id, pid } }, body: { action: 'shortlist' } as never })),
    onSuccess: done,
    onError: (e) => setMessage(e.message),
  });
  const award = useMutation({
    mutationFn: async (pid: number) => unwrap(await api.POST('/v2/organizations/rfqs/{id}/award/', { params: { path: { id } }, body: { proposal: pid } as never })),
    onSuccess: done,
    onError: (e) => setMessage(e.message),
  });
  return (
    <Panel title={`Proposals${rfq ? ` for ${str(rfq, 'title')}` : ''}`} wide>
      <QueryState query={proposals} empty={(r) => r.length === 0}>
        {(rows) => {
          const facts: [string, (p: Row) => ReactNode][] = [
            ['Status', (p) => <span className="badge">{str(p, 'status')}</span>],
            ['Version', (p) => fmtNum(num(p, 'version'))],
            ['Model', (p) => str(p, 'model')],
            ['Tokens lent', (p) => fmtNum(num(p.loan as Row, 'quantity'))],
            ['Cost over the term', (p) => fmtUsd(num(p, 'cost_usd'))],
            ['Option value today', (p) => fmtUsd(num(p, 'option_value_usd'))],
            ['Requirements met', (p) => {
              const reqs = (Array.isArray(p.requirements_met) ? p.requirements_met : []) as Row[];
              return `${reqs.filter((r) => str(r, 'status') === 'met').length} of ${reqs.length}`;
            }],
            ['Measured presence (30 d)', (p) => fmtPct(num((p.track_record as Row | undefined)?.uptime as Row, 'presence_pct'))],
            ['Measured volume (30 d)', (p) => fmtUsd(num(p.track_record as Row, 'volume_usd'))],
            ['Valid until', (p) => fmtTime(str(p, 'valid_until'))],
          ];
          return (
            <div className="table-scroll" tabIndex={0} role="region" aria-label="Proposals compared">
              <table>
                <caption>Proposals side by side</caption>
                <thead>
                  <tr>
                    <td />
                    {rows.map((p) => (
                      <th key={num(p, 'id')} scope="col">{name(p, 'market_maker')}</th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {facts.map(([label, cell]) => (
                    <tr key={label}>
                      <th scope="row">{label}</th>
                      {rows.map((p) => (
                        <td key={num(p, 'id')}>{cell(p)}</td>
                      ))}
                    </tr>
                  ))}
                  {mine && (
                    <tr>
                      <th scope="row">Decide</th>
                      {rows.map((p) => (
                        <td key={num(p, 'id')} className="actions">
                          <button type="button" className="secondary" disabled={str(p, 'status') !== 'submitted'} onClick={() => shortlist.mutate(num(p, 'id')!)}>Shortlist {name(p, 'market_maker')}</button>
                          <button type="button" disabled={!['submitted', 'shortlisted'].includes(str(p, 'status'))} onClick={() => award.mutate(num(p, 'id')!)}>Award {name(p, 'market_maker')}</button>
                        </td>
                      ))}
                    </tr>
                  )}
                </tbody>
              </table>
            </div>
          );
        }}
      </QueryState>
      {message && <p role="alert" className="error">{message}</p>}
    </Panel>
  );
}
