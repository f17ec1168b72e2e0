// Targets: a board by latest status with the list's facets as filters, and one target's
// evaluation history (value against its effective threshold, status changes). A target's
// threshold, whether it is evaluated and its Telegram notifications are changed, a target
// removed, and a new one created, through the preview (what would be added, modified,
// removed) before the batch saves it. Each role sees the targets the API lists for it.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, unwrap, type QueryOf } from '../../api/client';
import { LineChart } from '../../charts/line';
import { useScope } from '../../api/organizations';
import { useSessionInfo } from '../../api/session-info';
import { managesTarget } from '../../../../domain/targets/facts.ts';
import { useSearchParams } from '../../router';
import { fmtNum, fmtTime } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column } from '../../ui/table';
import { NewTarget } from './new-target';
import { describe, metricOf, PreviewShown, previewWith, useSaveBatch, type Preview, type Target, type TargetInput } from './preview';

type TargetsQuery = QueryOf<'/v2/organizations/targets/'>;
const STATUSES = ['alert', 'recovering', 'stable', 'unchecked'] as const satisfies readonly Target['status'][];
const TYPES = ['gb', 'mm'] as const satisfies readonly Target['type'][];
const FACETS = ['status', 'asset', 'exchange', 'type', 'organization'] as const satisfies NonNullable<TargetsQuery['facets']>;
type Facet = (typeof FACETS)[number];
const FILTER_OF = { status: 'statuses', asset: 'target_assets', exchange: 'exchanges', type: 'types', organization: 'target_organizations' } as const satisfies Record<Facet, keyof TargetsQuery>;

/** The one value chosen for a filter (kept in the address), as the list's query takes it. */
const chosen = (v: string | null): string[] | undefined => (v ? [v] : undefined);
const chosenOf = <T extends string>(list: readonly T[], v: string | null): T[] | undefined => (list as readonly (string | null)[]).includes(v) ? [v as T] : undefined;

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
  /** What the last saved change did: said here, as a change replaces the target shown. */
  const [notice, setNotice] = useState<string | null>(null);

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
                            <button type="button" className="card" aria-pressed={t.id === selected} onClick={() => { set({ target: String(t.id) }); setNotice(null); }}>
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
      {notice && <p role="status">{notice}</p>}
      {target && <TargetDetail target={target} onSaved={(text, id) => { setNotice(text); set({ target: id === null ? null : String(id) }); }} />}
      <NewTarget />
    </>
  );
}

type Update = Target['updates'][number];

/** Told what a saved change did, and the target to show after it (null: none). */
type OnSaved = (notice: string, id: number | null) => void;

function TargetDetail({ target, onSaved }: { target: Target; onSaved: OnSaved }) {
  const id = target.id;
  // Changed by whom the API lets change it (the domain's rule): a project its gb targets and
  // the mm targets on its assets, staff all; a market maker only sees its own.
  const scope = useScope().data;
  const staff = useSessionInfo().data?.staff ?? false;
  const manages =
    !!scope &&
    managesTarget(
      { staff, projects: new Set(scope.organizations.filter((o) => o.kind === 'project').map((o) => o.slug)), owned: new Set(scope.projectAssets) },
      { type: target.type, organization: target.organization.slug, asset: target.asset },
    );
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
      {manages && <ChangeTarget key={target.id} target={target} onSaved={onSaved} />}
    </div>
  );
}

/** The target's threshold, whether it is evaluated, its Telegram notifications; or its removal: each through the preview. */
function ChangeTarget({ target, onSaved }: { target: Target; onSaved: OnSaved }) {
  const [threshold, setThreshold] = useState(String(target.threshold));
  const [active, setActive] = useState(target.active);
  const [telegram, setTelegram] = useState(target.telegram_notifications);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const ask = useMutation({
    mutationFn: (remove: boolean) =>
      previewWith({ organization: target.organization.slug, asset: target.asset, metric: metricOf(target) }, (existing) =>
        remove ? existing.filter((t) => !sameTarget(t, target)) : existing.map((t) => (sameTarget(t, target) ? { ...t, threshold: Number(threshold), active, telegram_notifications: telegram } : t)),
      ),
    onSuccess: (p) => {
      setPreview(p);
      setMessage(null);
    },
    onError: (e) => setMessage(e.message),
  });
  // A change is the target deleted and made again (a new id), shown in its place; a removed
  // target is no longer shown.
  const save = useSaveBatch((created) => {
    const again = created.find((t) => sameTarget(t, target));
    onSaved(again ? `Saved: target ${again.id} replaces target ${target.id}.` : `Target ${target.id} removed.`, again?.id ?? null);
  });
  const changed = <T,>(set: (v: T) => void) => (v: T) => {
    set(v);
    setPreview(null);
  };
  return (
    <Panel title="Change the target" wide>
      <form className="controls" aria-label="Change the target" onSubmit={(e) => { e.preventDefault(); ask.mutate(false); }}>
        <label>
          Threshold
          <input type="number" step="any" required value={threshold} onChange={(e) => changed(setThreshold)(e.target.value)} />
        </label>
        <label className="check">
          <input type="checkbox" checked={active} onChange={(e) => changed(setActive)(e.target.checked)} />
          Evaluated (active)
        </label>
        <label className="check">
          <input type="checkbox" checked={telegram} onChange={(e) => changed(setTelegram)(e.target.checked)} />
          Telegram notifications
        </label>
        <button type="submit" disabled={ask.isPending}>Preview the change</button>
        <button type="button" className="secondary" disabled={ask.isPending} onClick={() => ask.mutate(true)}>Preview removing it</button>
      </form>
      {message && <p role="alert" className="error">{message}</p>}
      {preview && <PreviewShown preview={preview} saving={save.isPending} onSave={() => save.mutate(preview, { onError: (e) => setMessage(e.message) })} />}
    </Panel>
  );
}

/** The preview's matching key but the type (which follows the organization). */
const sameTarget = (a: Pick<TargetInput, 'exchange' | 'pair'> & { market_hours?: string | null }, t: Target) =>
  a.exchange === t.exchange && a.pair === t.pair && (a.market_hours ?? null) === (t.market_hours ?? null);

