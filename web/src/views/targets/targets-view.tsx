// Targets: a board by latest status with the list's facets as filters, and one target's
// evaluation history (value against its effective threshold, status changes). A threshold
// is changed through the preview (what would be added, modified, removed) before the batch
// saves it. Each role sees the targets the API lists for it.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, ApiError, num, str, unwrap, type Row } from '../../api/client';
import { LineChart } from '../../charts/line';
import { useSearchParams } from '../../router';
import { fmtNum, fmtTime } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column } from '../../ui/table';

const STATUSES = ['alert', 'recovering', 'stable', 'unchecked'] as const;
const FACETS = ['status', 'asset', 'exchange', 'type', 'organization'] as const;
type Facet = (typeof FACETS)[number];
const FILTER_OF: Record<Facet, string> = { status: 'statuses', asset: 'target_assets', exchange: 'exchanges', type: 'types', organization: 'target_organizations' };

interface TargetPage {
  count: number;
  results: Row[];
  facets?: Record<string, Record<string, number>>;
}

const describe = (t: Row) => `${str(t, 'asset')} ${str(t, 'exchange')} ${str(t, 'pair')} ${str(t, 'metric')}`;
const orgSlug = (t: Row) => (t.organization as { slug?: string } | undefined)?.slug ?? '';

export default function TargetsView() {
  const [q, set] = useSearchParams();
  const filters = Object.fromEntries(FACETS.map((f) => [FILTER_OF[f], q.get(FILTER_OF[f]) ?? undefined]).filter(([, v]) => v));
  const query = { include_facets: true, page: 1, page_size: 250, facets: FACETS.join(','), ...filters };
  const list = useQuery({ queryKey: ['targets', query], queryFn: async () => unwrap(await api.GET('/v2/organizations/targets/', { params: { query } })) as unknown as TargetPage });
  const selected = Number(q.get('target')) || null;
  const target = list.data?.results.find((t) => num(t, 'id') === selected);

  return (
    <>
      <QueryState query={list}>
        {(data) => (
          <>
            <form className="controls" aria-label="Target filters" onSubmit={(e) => e.preventDefault()}>
              {FACETS.map((f) => (
                <label key={f}>
                  {f === 'status' ? 'Status' : f[0]!.toUpperCase() + f.slice(1)}
                  <select value={q.get(FILTER_OF[f]) ?? ''} onChange={(e) => set({ [FILTER_OF[f]]: e.target.value || null, target: null })}>
                    <option value="">all</option>
                    {Object.entries(data.facets?.[f] ?? {}).map(([v, n]) => (
                      <option key={v} value={v}>
                        {v} ({n})
                      </option>
                    ))}
                  </select>
                </label>
              ))}
              <p className="muted">{data.count} targets</p>
            </form>
            <div className="panels board">
              {STATUSES.map((s) => {
                const items = data.results.filter((t) => str(t, 'status') === s);
                return (
                  <Panel key={s} title={`${s[0]!.toUpperCase()}${s.slice(1)} (${items.length})`}>
                    {items.length === 0 ? (
                      <p className="muted">None.</p>
                    ) : (
                      <ul className="cards">
                        {items.map((t) => (
                          <li key={num(t, 'id')}>
                            <button type="button" className="card" aria-pressed={num(t, 'id') === selected} onClick={() => set({ target: String(num(t, 'id')) })}>
                              <span className={`badge ${s}`}>{s}</span> <strong>{describe(t)}</strong>
                              <span className="muted">
                                {str(t, 'type')} · {orgSlug(t)} · {str(t, 'direction')} {fmtNum(num(t, 'effective_threshold'))}
                              </span>
                            </button>
                          </li>
                        ))}
                      </ul>
                    )}
                  </Panel>
                );
              })}
            </div>
          </>
        )}
      </QueryState>
      {target && <TargetDetail target={target} all={list.data?.results ?? []} />}
    </>
  );
}

function TargetDetail({ target, all }: { target: Row; all: Row[] }) {
  const id = num(target, 'id')!;
  const evaluations = useQuery({
    queryKey: ['evaluations', id],
    queryFn: async () => unwrap(await api.GET('/v2/organizations/targets/{id}/evaluations/', { params: { path: { id }, query: { lookback: '1-day' } } })) as unknown as Row[],
  });
  const series = useMemo(() => {
    const rows = evaluations.data ?? [];
    const at = (r: Row) => Date.parse(str(r, 'timestamp'));
    return [
      { name: 'value', points: rows.map((r): [number, number | null] => [at(r), num(r, 'value')]) },
      { name: 'effective threshold', points: rows.map((r): [number, number | null] => [at(r), num(r, 'effective_threshold')]), dashed: true },
    ];
  }, [evaluations.data]);
  const updates = (Array.isArray(target.updates) ? target.updates : []) as { status: string; updated_at: string }[];
  const updateColumns: Column<{ status: string; updated_at: string }>[] = [
    { key: 'updated_at', label: 'When (UTC)', value: (u) => u.updated_at, render: (u) => fmtTime(u.updated_at) },
    { key: 'status', label: 'Status', value: (u) => u.status, render: (u) => <span className={`badge ${u.status}`}>{u.status}</span> },
  ];
  return (
    <div className="panels">
      <Panel title={`Target ${id}: ${describe(target)}`} wide>
        <QueryState query={evaluations} empty={(r) => r.length === 0}>
          {() => <LineChart label={`Evaluations of target ${id} over the last day: value against the effective threshold`} series={series} />}
        </QueryState>
        <Table caption="Status changes" columns={updateColumns} rows={[...updates].reverse()} rowKey={(u) => u.updated_at + u.status} />
      </Panel>
      <ChangeThreshold target={target} all={all} />
    </div>
  );
}

interface Preview {
  summary: { added: number; modified: number; removed: number };
  changes: { action: string; changed_fields?: string[]; before?: Row; after?: Row }[];
  batch: Record<string, unknown>;
}

/**
 * The preview takes the complete set of a scope (organization, asset, metric): every target
 * of that scope the caller sees is sent, the chosen one with its new threshold.
 */
function ChangeThreshold({ target, all }: { target: Row; all: Row[] }) {
  const queryClient = useQueryClient();
  const [threshold, setThreshold] = useState(String(num(target, 'threshold') ?? ''));
  const [preview, setPreview] = useState<Preview | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const scope = { organization: orgSlug(target), asset: str(target, 'asset'), metrics: [str(target, 'metric')] };
  const inScope = all.filter((t) => orgSlug(t) === scope.organization && str(t, 'asset') === scope.asset && str(t, 'metric') === scope.metrics[0]);
  const body = {
    scopes: [scope],
    targets: inScope.map((t) => ({
      organization: orgSlug(t),
      asset: str(t, 'asset'),
      exchange: str(t, 'exchange'),
      pair: str(t, 'pair'),
      metric: str(t, 'metric'),
      threshold: num(t, 'id') === num(target, 'id') ? Number(threshold) : num(t, 'threshold'),
      direction: str(t, 'direction'),
      market_hours: str(t, 'market_hours') || undefined,
      telegram_notifications: t.telegram_notifications === true,
      scaling_enabled: t.scaling_enabled === true,
      scaling_source: str(t, 'scaling_source') || undefined,
      scaling_reference_price: num(t, 'scaling_reference_price') ?? undefined,
    })),
  };
  const ask = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v2/organizations/targets/preview/', { body: body as never })) as unknown as Preview,
    onSuccess: (p) => {
      setPreview(p);
      setMessage(null);
    },
    onError: (e) => setMessage(e.message),
  });
  const save = useMutation({
    mutationFn: async () => unwrap(await api.POST('/v2/organizations/targets/batch/', { body: preview!.batch as never })),
    onSuccess: () => {
      setPreview(null);
      setMessage('Saved.');
      void queryClient.invalidateQueries({ queryKey: ['targets'] });
    },
    onError: (e) => setMessage(e instanceof ApiError ? e.message : String(e)),
  });
  return (
    <Panel title="Change the threshold" wide>
      <form className="controls" onSubmit={(e) => { e.preventDefault(); ask.mutate(); }}>
        <label>
          New threshold
          <input type="number" step="any" required value={threshold} onChange={(e) => { setThreshold(e.target.value); setPreview(null); }} />
        </label>
        <button type="submit" disabled={ask.isPending}>Preview the change</button>
      </form>
      {message && <p role="status" className={message === 'Saved.' ? undefined : 'error'}>{message}</p>}
      {preview && (
        <>
          <p>
            Added {preview.summary.added}, modified {preview.summary.modified}, removed {preview.summary.removed}.
          </p>
          <ul>
            {preview.changes.map((c, i) => (
              <li key={i}>
                {c.action}: {describe(c.after ?? c.before ?? {})} {c.changed_fields?.length ? `(${c.changed_fields.join(', ')})` : ''}
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => save.mutate()} disabled={save.isPending}>Save</button>
        </>
      )}
    </Panel>
  );
}
