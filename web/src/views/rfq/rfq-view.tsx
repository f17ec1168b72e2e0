// RFQ: the requests the caller sees, and one request's proposals side by side (cost,
// option value, requirements met, the market maker's measured track record), with the
// project's shortlist and award, and its request changed while a draft, opened, closed or
// cancelled; what changed between the request's versions and between a proposal's
// revisions. A market maker sees
// only its own proposals, as the API answers.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { api, itemsOf, unwrap, type Schemas } from '../../api/client';
import { useScope } from '../../api/organizations';
import { useSearchParams } from '../../router';
import { fmtNum, fmtPct, fmtTime, fmtUsd } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { pick, Select } from '../../ui/choices';
import { Table, type Column } from '../../ui/table';
import { VersionHistory } from './versions';
import { RfqForm } from './rfq-form';
import { LIVE_PROPOSAL, PROPOSAL_ACTION_FROM, RFQ_ACTION_FROM, RFQ_ACTIONS, RFQ_STATUSES, rfqTermsEditable, type ProposalAction, type ProposalStatus, type RfqAction } from '../../../../domain/rfq/rfq.ts';
import { ProposalForm } from './proposal-form';
import { RequestTerms, requirementText } from './request-terms';
import { ConfirmButton } from '../../ui/confirm-button';

type Rfq = Schemas['Rfq'];

/** What each action's button says (the rule of which status allows it is the domain's). */
const ACTION_WORDS: Record<RfqAction, string> = { open: 'Open the request', close: 'Close the request', cancel: 'Cancel the request' };

export default function RfqView() {
  const [q, set] = useSearchParams();
  // One status, or all; the API filters (statuses). The request shown is read on its own, so
  // a filter that leaves it out (or a status change that moves it out) keeps it shown.
  const status = pick(['all', ...RFQ_STATUSES], q.get('status'), 'all');
  const query = status === 'all' ? {} : { statuses: [status] };
  const rfqs = useQuery({ queryKey: ['rfqs', query], queryFn: async () => itemsOf(unwrap(await api.GET('/v2/organizations/rfqs/', { params: { query } }))) });
  const selected = Number(q.get('rfq')) || null;
  const shown = useQuery({
    queryKey: ['rfqs', 'one', selected],
    enabled: selected !== null,
    queryFn: async () => unwrap(await api.GET('/v2/organizations/rfqs/{id}/', { params: { path: { id: selected! } } })),
  });
  const columns: Column<Rfq>[] = [
    { key: 'title', label: 'Request', value: (r) => r.title, render: (r) => <a href={`/app/rfq?rfq=${r.id}`} onClick={(e) => { e.preventDefault(); set({ rfq: String(r.id) }); }}>{r.title || `#${r.id}`}</a> },
    { key: 'asset', label: 'Asset', value: (r) => r.asset },
    { key: 'project', label: 'Project', value: (r) => r.organization.name },
    { key: 'status', label: 'Status', value: (r) => r.status, render: (r) => <span className="badge">{r.status}</span> },
    { key: 'deadline', label: 'Deadline (UTC)', value: (r) => r.deadline, render: (r) => fmtTime(r.deadline) },
    { key: 'sealed', label: 'Sealed', value: (r) => (r.sealed ? 'yes' : 'no') },
  ];
  return (
    <div className="panels">
      <Panel title="Requests for proposals" wide>
        <form className="controls" aria-label="Request filters" onSubmit={(e) => e.preventDefault()}>
          <Select label="Status" value={status} options={['all', ...RFQ_STATUSES]} onChange={(v) => set({ status: v === 'all' ? null : v })} />
        </form>
        <QueryState query={rfqs} empty={(r) => r.length === 0} emptyText={status === 'all' ? 'No requests yet.' : `No ${status} requests.`}>
          {(rows) => <Table caption="Requests you can see" columns={columns} rows={rows} rowKey={(r) => String(r.id)} />}
        </QueryState>
      </Panel>
      {selected && <Proposals key={selected} id={selected} rfq={shown.data} />}
      {selected && <RfqVersions id={selected} />}
      <RfqForm onSaved={(id) => set({ rfq: String(id) })} />
    </div>
  );
}

function Proposals({ id, rfq }: { id: number; rfq: Rfq | undefined }) {
  const queryClient = useQueryClient();
  const scope = useScope();
  const [message, setMessage] = useState<string | null>(null);
  const [revisionsOf, setRevisionsOf] = useState<number | null>(null);
  /** The caller's live proposal being revised. */
  const [revising, setRevising] = useState<number | null>(null);
  /** Whether the project's draft is being changed. */
  const [editing, setEditing] = useState(false);
  const [changed, setChanged] = useState(false);
  const proposals = useQuery({ queryKey: ['proposals', id], queryFn: async () => itemsOf(unwrap(await api.GET('/v2/organizations/rfqs/{id}/proposals/', { params: { path: { id } } }))) });
  const project = rfq?.organization.slug;
  const mine = !!scope.data?.organizations.some((o) => o.slug === project);
  const done = () => {
    setMessage(null);
    void queryClient.invalidateQueries({ queryKey: ['proposals', id] });
    void queryClient.invalidateQueries({ queryKey: ['rfqs'] });
  };
  // shortlist or reject (the project), withdraw (the market maker).
  const change = useMutation({
    mutationFn: async ({ pid, action }: { pid: number; action: 'shortlist' | 'reject' | 'withdraw' }) =>
      unwrap(await api.PATCH('/v2/organizations/rfqs/{id}/proposals/{pid}/', { params: { path: { id, pid } }, body: { action } })),
    onSuccess: done,
    onError: (e) => setMessage(e.message),
  });
  const allows = (p: { status: string }, action: ProposalAction) => PROPOSAL_ACTION_FROM[action].includes(p.status as ProposalStatus);
  const award = useMutation({
    mutationFn: async (pid: number) => unwrap(await api.POST('/v2/organizations/rfqs/{id}/award/', { params: { path: { id } }, body: { proposal: pid } })),
    onSuccess: done,
    onError: (e) => setMessage(e.message),
  });
  const act = useMutation({
    mutationFn: async (action: RfqAction) => unwrap(await api.POST('/v2/organizations/rfqs/{id}/actions/', { params: { path: { id } }, body: { action } })),
    onSuccess: () => {
      done();
      void queryClient.invalidateQueries({ queryKey: ['rfqs', id, 'versions'] });
    },
    onError: (e) => setMessage(e.message),
  });
  // The caller's market makers that may propose (invited, or anyone when none is named),
  // and their live proposals (a market maker's list holds only its own).
  const makers = (scope.data?.organizations ?? []).filter((o) => o.kind === 'market_maker' && (!rfq || rfq.invited.length === 0 || rfq.invited.includes(o.slug)));
  const live = (proposals.data ?? []).filter((p) => makers.some((m) => m.slug === p.market_maker.slug) && LIVE_PROPOSAL.includes(p.status as ProposalStatus));
  const proposing = rfq && rfq.accepting_proposals && proposals.isSuccess && makers.length > live.length && !mine;
  // The request's own changes, for the project that made it: those its status allows.
  const editable = mine && rfq && rfqTermsEditable(rfq.status);
  const actions = mine && rfq && (
    <div className="actions" role="group" aria-label="The request">
      {editable && <button type="button" className="secondary" aria-expanded={editing} onClick={() => { setEditing(!editing); setChanged(false); }}>Change the draft</button>}
      {RFQ_ACTIONS.filter((a) => RFQ_ACTION_FROM[a].includes(rfq.status)).map((a) =>
        // Opening is what a draft is for; closing and cancelling end the request.
        a === 'open' ? (
          <button key={a} type="button" disabled={act.isPending} onClick={() => act.mutate(a)}>{ACTION_WORDS[a]}</button>
        ) : (
          <ConfirmButton key={a} label={ACTION_WORDS[a]} disabled={act.isPending} onConfirm={() => act.mutate(a)} />
        ),
      )}
    </div>
  );
  return (
    <Panel title={`Proposals${rfq ? ` for ${rfq.title}` : ''}`} actions={actions} wide>
      {rfq && <RequestTerms rfq={rfq} />}
      {editable && editing && <RfqForm draft={rfq} onSaved={() => { setEditing(false); setChanged(true); }} />}
      {changed && <p role="status">Draft changed.</p>}
      <QueryState query={proposals} empty={(r) => r.length === 0} emptyText="No proposals yet.">
        {(rows) => {
          // Typed by the answer: the client's reading of ComparedProposal drops the always-null
          // track_record.spread_bps, so the schema's own type does not fit it.
          const facts: [string, (p: (typeof rows)[number]) => ReactNode][] = [
            ['Status', (p) => <span className="badge">{p.status}</span>],
            ['Version', (p) => fmtNum(p.version)],
            ['Model', (p) => p.model],
            ['Tokens lent', (p) => fmtNum(p.loan.quantity)],
            ['Cost over the term', (p) => fmtUsd(p.cost_usd)],
            ['Option value today', (p) => fmtUsd(p.option_value_usd)],
            ['Requirements met', (p) => `${p.requirements_met.filter((r) => r.status === 'met').length} of ${p.requirements_met.length}`],
            ['Measured presence (30 d)', (p) => fmtPct(p.track_record.uptime.presence_pct)],
            ['Measured volume (30 d)', (p) => fmtUsd(p.track_record.volume_usd)],
            // Each requirement of the request, as each proposal meets it.
            ...(rfq?.requirements ?? []).map((k, i): [string, (p: (typeof rows)[number]) => ReactNode] => [
              `Meets ${requirementText(k)}`,
              (p) => <span className={`badge ${p.requirements_met[i]?.status ?? ''}`}>{p.requirements_met[i]?.status ?? '—'}</span>,
            ]),
            ['Valid until (UTC)', (p) => fmtTime(p.valid_until)],
          ];
          return (
            <div className="table-scroll" tabIndex={0} role="region" aria-label="Proposals compared">
              <table>
                <caption>Proposals side by side</caption>
                <thead>
                  <tr>
                    <td />
                    {rows.map((p) => (
                      <th key={p.id} scope="col">{p.market_maker.name}</th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {facts.map(([label, cell]) => (
                    <tr key={label}>
                      <th scope="row">{label}</th>
                      {rows.map((p) => (
                        <td key={p.id}>{cell(p)}</td>
                      ))}
                    </tr>
                  ))}
                  <tr>
                    <th scope="row">Revisions</th>
                    {rows.map((p) => (
                      <td key={p.id}>
                        <button type="button" className="secondary" aria-expanded={revisionsOf === p.id} aria-controls="proposal-revisions" onClick={() => setRevisionsOf(revisionsOf === p.id ? null : p.id)}>
                          Revisions of {p.market_maker.name}
                        </button>
                      </td>
                    ))}
                  </tr>
                  {mine && (
                    <tr>
                      <th scope="row">Decide</th>
                      {rows.map((p) => (
                        <td key={p.id}>
                          <div className="actions">
                            <button type="button" className="secondary" disabled={!allows(p, 'shortlist')} onClick={() => change.mutate({ pid: p.id, action: 'shortlist' })}>Shortlist {p.market_maker.name}</button>
                            <ConfirmButton label={`Reject ${p.market_maker.name}`} disabled={!allows(p, 'reject')} onConfirm={() => change.mutate({ pid: p.id, action: 'reject' })} />
                            <ConfirmButton label={`Award ${p.market_maker.name}`} className="" disabled={!LIVE_PROPOSAL.includes(p.status as ProposalStatus)} onConfirm={() => award.mutate(p.id)} />
                          </div>
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
      {live.map((p) => (
        <div key={p.id} className="actions">
          {rfq?.accepting_proposals && (
            <button type="button" className="secondary" aria-expanded={revising === p.id} onClick={() => setRevising(revising === p.id ? null : p.id)}>Revise the proposal of {p.market_maker.name}</button>
          )}
          <ConfirmButton label={`Withdraw the proposal of ${p.market_maker.name}`} disabled={change.isPending} onConfirm={() => change.mutate({ pid: p.id, action: 'withdraw' })} />
        </div>
      ))}
      {rfq?.accepting_proposals && live.filter((p) => p.id === revising).map((p) => <ProposalForm key={p.id} rfq={rfq} makers={makers} revising={p} />)}
      {proposing && <ProposalForm rfq={rfq} makers={makers.filter((m) => !live.some((p) => p.market_maker.slug === m.slug))} />}
      {message && <p role="alert" className="error">{message}</p>}
      {revisionsOf !== null && <ProposalRevisions id={id} pid={revisionsOf} name={proposals.data?.find((p) => p.id === revisionsOf)?.market_maker.name ?? `#${revisionsOf}`} />}
    </Panel>
  );
}

/** A proposal's revisions (listProposalVersions), each with what changed from the one before. */
function ProposalRevisions({ id, pid, name }: { id: number; pid: number; name: string }) {
  const versions = useQuery({
    queryKey: ['proposals', id, 'versions', pid],
    queryFn: async () => unwrap(await api.GET('/v2/organizations/rfqs/{id}/proposals/{pid}/versions/', { params: { path: { id, pid } } })),
  });
  return (
    <section id="proposal-revisions" aria-labelledby="proposal-revisions-title">
      <h3 id="proposal-revisions-title">Revisions of {name}'s proposal</h3>
      <QueryState query={versions}>{(v) => <VersionHistory label={`Versions of ${name}'s proposal`} versions={v} when={(x) => x.updated_at} />}</QueryState>
    </section>
  );
}

/** The request's versions (listRfqVersions): a market maker never sees the drafts. */
function RfqVersions({ id }: { id: number }) {
  const versions = useQuery({ queryKey: ['rfqs', id, 'versions'], queryFn: async () => unwrap(await api.GET('/v2/organizations/rfqs/{id}/versions/', { params: { path: { id } } })) });
  return (
    <Panel title="Versions of the request" wide>
      <QueryState query={versions}>
        {(v) => (
          <VersionHistory
            label="Versions of the request"
            versions={v}
            // An RFQ carries a time for its creation and its status changes only, not for a change of its terms.
            when={(x, before) => (!before ? x.created_at : x.history.length > before.history.length ? x.history.at(-1)?.at : undefined)}
          />
        )}
      </QueryState>
    </Panel>
  );
}
