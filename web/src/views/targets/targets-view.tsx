// Targets: a board by latest status with the list's facets as filters, and one target's
// evaluation history (value against its effective threshold, status changes). A threshold
// is changed, and a new target created, through the preview (what would be added, modified,
// removed) before the batch saves it. Each role sees the targets the API lists for it.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useScope, type Organization } from '../../api/organizations';
import { api, itemsOf, unwrap, type paths, type QueryOf, type Schemas } from '../../api/client';
import { LineChart } from '../../charts/line';
import { useSearchParams } from '../../router';
import { fmtNum, fmtTime } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column } from '../../ui/table';

type Target = Schemas['Target'];
type TargetsQuery = QueryOf<'/v2/organizations/targets/'>;
const STATUSES = ['alert', 'recovering', 'stable', 'unchecked'] as const satisfies readonly Target['status'][];
const TYPES = ['gb', 'mm'] as const satisfies readonly Target['type'][];
const FACETS = ['status', 'asset', 'exchange', 'type', 'organization'] as const satisfies NonNullable<TargetsQuery['facets']>;
type Facet = (typeof FACETS)[number];
const FILTER_OF = { status: 'statuses', asset: 'target_assets', exchange: 'exchanges', type: 'types', organization: 'target_organizations' } as const satisfies Record<Facet, keyof TargetsQuery>;

/** The one value chosen for a filter (kept in the address), as the list's query takes it. */
const chosen = (v: string | null): string[] | undefined => (v ? [v] : undefined);
const chosenOf = <T extends string>(list: readonly T[], v: string | null): T[] | undefined => (list as readonly (string | null)[]).includes(v) ? [v as T] : undefined;

const describe = (t: { asset: string; exchange: string; pair: string; metric: string }) => `${t.asset} ${t.exchange} ${t.pair} ${t.metric}`;

export default function TargetsView() {
  const [q, set] = useSearchParams();
  const query: TargetsQuery = {
    include_facets: true,
    page: 1,
    page_size: 250,
    facets: [...FACETS],
    statuses: chosenOf(STATUSES, q.get(FILTER_OF.status)),
    target_assets: chosen(q.get(FILTER_OF.asset)),
    exchanges: chosen(q.get(FILTER_OF.exchange)),
    types: chosenOf(TYPES, q.get(FILTER_OF.type)),
    target_organizations: chosen(q.get(FILTER_OF.organization)),
  };
  const list = useQuery({
    queryKey: ['targets', query],
    queryFn: async () => {
      const data = unwrap(await api.GET('/v2/organizations/targets/', { params: { query } }));
      // With include_facets the answer is a page; a plain list only without paging.
      return Array.isArray(data) ? { count: data.length, results: data, facets: {} } : { count: data.count, results: data.results ?? [], facets: data.facets ?? {} };
    },
  });
  const selected = Number(q.get('target')) || null;
  const target = list.data?.results.find((t) => t.id === selected);

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
                    {Object.entries(data.facets[f] ?? {}).map(([v, n]) => (
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
                const items = data.results.filter((t) => t.status === s);
                return (
                  <Panel key={s} title={`${s[0]!.toUpperCase()}${s.slice(1)} (${items.length})`}>
                    {items.length === 0 ? (
                      <p className="muted">None.</p>
                    ) : (
                      <ul className="cards">
                        {items.map((t) => (
                          <li key={t.id}>
                            <button type="button" className="card" aria-pressed={t.id === selected} onClick={() => set({ target: String(t.id) })}>
                              <span className={`badge ${s}`}>{s}</span> <strong>{describe(t)}</strong>
                              <span className="muted">
                                {t.type} · {t.organization.slug} · {t.direction} {fmtNum(t.effective_threshold)}
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
      {target && <TargetDetail target={target} />}
      <NewTarget />
    </>
  );
}

type Update = Target['updates'][number];

function TargetDetail({ target }: { target: Target }) {
  const id = target.id;
  const evaluations = useQuery({
    queryKey: ['evaluations', id],
    queryFn: async () => unwrap(await api.GET('/v2/organizations/targets/{id}/evaluations/', { params: { path: { id }, query: { lookback: '1-day' } } })),
  });
  const series = useMemo(() => {
    const rows = evaluations.data ?? [];
    return [
      { name: 'value', points: rows.map((r): [number, number | null] => [Date.parse(r.timestamp), r.value]) },
      { name: 'effective threshold', points: rows.map((r): [number, number | null] => [Date.parse(r.timestamp), r.effective_threshold]), dashed: true },
    ];
  }, [evaluations.data]);
  const updates = target.updates;
  const updateColumns: Column<Update>[] = [
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
      <ChangeThreshold target={target} />
    </div>
  );
}

type Preview = paths['/v2/organizations/targets/preview/']['post']['responses'][200]['content']['application/json'];
type MetricId = Schemas['MetricId'];
/**
 * The document types a listed target's metric as text and the preview's input as a metric
 * identifier; the list only holds metrics the API accepted, so the text is one of them.
 */
const metricOf = (t: Target) => t.metric as MetricId;

/** A listed target as the preview takes it back, unchanged. */
const inputOf = (t: Target): Schemas['TargetInput'] => ({
  organization: t.organization.slug,
  asset: t.asset,
  exchange: t.exchange,
  pair: t.pair,
  metric: metricOf(t),
  threshold: t.threshold,
  direction: t.direction,
  market_hours: t.market_hours ?? undefined,
  telegram_notifications: t.telegram_notifications,
  scaling_enabled: t.scaling_enabled,
  scaling_source: t.scaling_source,
  scaling_reference_price: t.scaling_reference_price,
});

interface ScopeKey {
  organization: string;
  asset: string;
  metric: MetricId;
}

/**
 * The preview takes the complete set of a scope (organization, asset, metric): a target of
 * the scope left out would be `removed`. So the scope is read whole from the list, not from
 * the board, whose filters may hide some of it.
 */
async function previewWith(scope: ScopeKey, change: (existing: Schemas['TargetInput'][]) => Schemas['TargetInput'][]): Promise<Preview> {
  const listed = unwrap(await api.GET('/v2/organizations/targets/', { params: { query: { target_organizations: [scope.organization], target_assets: [scope.asset], metrics: [scope.metric] } } }));
  const existing = itemsOf(listed).filter((t) => t.organization.slug === scope.organization && t.asset === scope.asset && t.metric === scope.metric).map(inputOf);
  const body: Schemas['PreviewBody'] = { scopes: [{ organization: scope.organization, asset: scope.asset, metrics: [scope.metric] }], targets: change(existing) };
  return unwrap(await api.POST('/v2/organizations/targets/preview/', { body }));
}

/** Saves a preview's batch; the board is asked again. */
function useSaveBatch(onSaved: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    // The preview's batch is what the batch takes; the document types its fields (direction,
    // metric, scaling_source) as text where the batch's input has their enums.
    mutationFn: async (preview: Preview) => unwrap(await api.POST('/v2/organizations/targets/batch/', { body: preview.batch as Schemas['TargetBatchInput'] })),
    onSuccess: () => {
      onSaved();
      void queryClient.invalidateQueries({ queryKey: ['targets'] });
    },
  });
}

/** What the preview would change, and the button that saves it. */
function PreviewShown({ preview, onSave, saving }: { preview: Preview; onSave: () => void; saving: boolean }) {
  return (
    <>
      <p>
        Added {preview.summary.added}, modified {preview.summary.modified}, removed {preview.summary.removed}.
      </p>
      <ul aria-label="Changes">
        {preview.changes.map((c, i) => (
          <li key={i}>
            {c.action}: {describe(c.after ?? c.before ?? { asset: '', exchange: '', pair: '', metric: '' })} {c.changed_fields.length ? `(${c.changed_fields.join(', ')})` : ''}
          </li>
        ))}
      </ul>
      <button type="button" onClick={onSave} disabled={saving}>Save</button>
    </>
  );
}

function ChangeThreshold({ target }: { target: Target }) {
  const [threshold, setThreshold] = useState(String(target.threshold));
  const [preview, setPreview] = useState<Preview | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const ask = useMutation({
    mutationFn: () =>
      previewWith({ organization: target.organization.slug, asset: target.asset, metric: metricOf(target) }, (existing) =>
        existing.map((t) => (sameTarget(t, target) ? { ...t, threshold: Number(threshold) } : t)),
      ),
    onSuccess: (p) => {
      setPreview(p);
      setMessage(null);
    },
    onError: (e) => setMessage(e.message),
  });
  const save = useSaveBatch(() => {
    setPreview(null);
    setMessage('Saved.');
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
      {preview && <PreviewShown preview={preview} saving={save.isPending} onSave={() => save.mutate(preview, { onError: (e) => setMessage(e.message) })} />}
    </Panel>
  );
}

/** The preview's matching key but the type (which follows the organization). */
const sameTarget = (a: Schemas['TargetInput'], t: Target) =>
  a.exchange === t.exchange && a.pair === t.pair && (a.market_hours ?? null) === (t.market_hours ?? null);

/**
 * Metrics offered for a new target: the common ones of each family (the API takes every
 * identifier of the document; its answer names a metric the organization's type lacks).
 */
const NEW_METRICS = ['volume/volume', 'spread/spread_bps', 'depth/bid_2bps', 'depth/ask_2bps', 'depth/bid_10bps', 'depth/ask_10bps', 'depth/bid_50bps', 'depth/ask_50bps', 'uptime/spread/spread_uptime', 'slippage/slippage_buy_at_10000', 'slippage/slippage_sell_at_10000'] as const satisfies readonly MetricId[];

/**
 * A new target for a scope the caller manages: a project's members manage its targets (a
 * market maker's members manage none, docs/targets.md), so the organizations offered are the
 * caller's projects, with their assets and pairs. The preview shows it added before saving.
 */
function NewTarget() {
  const scope = useScope();
  const projects = (scope.data?.organizations ?? []).filter((o) => o.kind === 'project' && o.pairs.length > 0);
  if (projects.length === 0) return null;
  return <NewTargetForm projects={projects} />;
}

function NewTargetForm({ projects }: { projects: Organization[] }) {
  const [orgSlug, setOrg] = useState(projects[0]!.slug);
  const org = projects.find((o) => o.slug === orgSlug) ?? projects[0]!;
  const assets = [...new Set(org.pairs.map((p) => p.asset))].sort();
  const [assetChosen, setAsset] = useState(assets[0] ?? '');
  const asset = assets.includes(assetChosen) ? assetChosen : (assets[0] ?? '');
  const pairs = org.pairs.filter((p) => p.asset === asset);
  const [pairChosen, setPair] = useState('');
  const pair = pairs.find((p) => `${p.exchange} ${p.pair}` === pairChosen) ?? pairs[0];
  const [metric, setMetric] = useState<MetricId>(NEW_METRICS[0]);
  const [threshold, setThreshold] = useState('');
  const [direction, setDirection] = useState<'' | 'above' | 'below'>('');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const changed = <T,>(set: (v: T) => void) => (v: T) => {
    set(v);
    setPreview(null);
  };
  const ask = useMutation({
    mutationFn: () => {
      const added: Schemas['TargetInput'] = {
        organization: org.slug,
        asset,
        exchange: pair!.exchange,
        pair: pair!.pair,
        metric,
        // Left empty: the metric's default threshold and direction (the preview shows them).
        ...(threshold !== '' ? { threshold: Number(threshold) } : {}),
        ...(direction ? { direction } : {}),
      };
      return previewWith({ organization: org.slug, asset, metric }, (existing) => [...existing, added]);
    },
    onSuccess: (p) => {
      setPreview(p);
      setMessage(null);
    },
    onError: (e) => setMessage(e.message),
  });
  const save = useSaveBatch(() => {
    setPreview(null);
    setMessage('Saved.');
  });
  return (
    <Panel title="New target" wide>
      <form className="controls" aria-label="New target" onSubmit={(e) => { e.preventDefault(); ask.mutate(); }}>
        <label>
          Organization
          <select value={org.slug} onChange={(e) => changed(setOrg)(e.target.value)}>
            {projects.map((o) => <option key={o.slug} value={o.slug}>{o.name}</option>)}
          </select>
        </label>
        <label>
          Asset
          <select value={asset} onChange={(e) => changed(setAsset)(e.target.value)}>
            {assets.map((a) => <option key={a} value={a}>{a}</option>)}
          </select>
        </label>
        <label>
          Pair
          <select value={pair ? `${pair.exchange} ${pair.pair}` : ''} onChange={(e) => changed(setPair)(e.target.value)}>
            {pairs.map((p) => <option key={`${p.exchange} ${p.pair}`} value={`${p.exchange} ${p.pair}`}>{p.exchange} {p.pair}</option>)}
          </select>
        </label>
        <label>
          Metric
          <select value={metric} onChange={(e) => changed(setMetric)(e.target.value as MetricId)}>
            {NEW_METRICS.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </label>
        <label>
          Threshold
          <input type="number" step="any" placeholder="the metric's default" value={threshold} onChange={(e) => changed(setThreshold)(e.target.value)} />
        </label>
        <label>
          Direction
          <select value={direction} onChange={(e) => changed(setDirection)(e.target.value as '' | 'above' | 'below')}>
            <option value="">the metric's default</option>
            <option value="above">above</option>
            <option value="below">below</option>
          </select>
        </label>
        <button type="submit" disabled={ask.isPending || !pair}>Preview the new target</button>
      </form>
      {message && <p role="status" className={message === 'Saved.' ? undefined : 'error'}>{message}</p>}
      {preview && <PreviewShown preview={preview} saving={save.isPending} onSave={() => save.mutate(preview, { onError: (e) => setMessage(e.message) })} />}
    </Panel>
  );
}
