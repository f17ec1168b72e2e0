// Operations, for staff (GET /v1/admin/status/, /v1/admin/orderbook/minutes/): what each
// processor has written, dead-lettered and skipped (with the reasons) since the service
// started, the last dead letters with their reasons, how far the hour and day rollups
// reach, what the market caches hold and save, and one pair's stored order-book minutes
// over a window: what an operator looks at to see that ingestion keeps up.
import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from '../../router';
import { pick } from '../../ui/choices';
import { api, unwrap, type paths } from '../../api/client';
import { useScope } from '../../api/organizations';
import { fmtNum, fmtPct, fmtPrice, fmtTime } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column } from '../../ui/table';
import { MINUTE_MS } from '../../../../lib/time.ts';

type Status = paths['/v1/admin/status/']['get']['responses']['200']['content']['application/json'];
type Processor = Status['processors'][string];
type DeadLetter = Processor['recentDeadLetters'][number] & { processor: string };
type Minute = paths['/v1/admin/orderbook/minutes/']['get']['responses']['200']['content']['application/json'][number];
type ProcessorRow = Processor & { name: string };
interface CacheRow {
  name: string;
  enabled: boolean;
  bytes: number;
  maxBytes: number;
  entries: number;
  hits: number;
  misses: number;
}

const MIB = 2 ** 20;
const hitShare = (c: CacheRow) => (c.hits + c.misses === 0 ? null : (100 * c.hits) / (c.hits + c.misses));

export default function OperationsView() {
  const status = useQuery({ queryKey: ['status'], queryFn: async () => unwrap(await api.GET('/v1/admin/status/')) });
  return (
    <div className="panels">
      <QueryState query={status}>{(s) => <StatusPanels status={s} />}</QueryState>
      <PairMinutes />
    </div>
  );
}

function StatusPanels({ status }: { status: Status }) {
  const processors: ProcessorRow[] = Object.entries(status.processors).map(([name, p]) => ({ ...p, name }));
  const reasons = (r: ProcessorRow) => Object.entries(r.skipReasons).map(([why, n]) => `${why}: ${fmtNum(n)}`).join('; ');
  const processorColumns: Column<ProcessorRow>[] = [
    { key: 'name', label: 'Processor', value: (r) => r.name },
    { key: 'ok', label: 'Written', value: (r) => r.ok, render: (r) => fmtNum(r.ok), numeric: true },
    { key: 'deadLettered', label: 'Dead-lettered', value: (r) => r.deadLettered, render: (r) => fmtNum(r.deadLettered), numeric: true },
    { key: 'skipped', label: 'Skipped', value: (r) => r.skipped, render: (r) => fmtNum(r.skipped), numeric: true },
    { key: 'flushes', label: 'Flushes', value: (r) => r.flushes, render: (r) => fmtNum(r.flushes), numeric: true },
    { key: 'reasons', label: 'Skipped because', value: reasons },
    { key: 'readsHeldBack', label: 'Reading held back', value: (r) => r.readsHeldBack, render: (r) => fmtNum(r.readsHeldBack), numeric: true },
  ];
  const dead: DeadLetter[] = Object.entries(status.processors)
    // Each processor's newest first, then all by when they were produced (ties keep that order).
    .flatMap(([processor, p]) => p.recentDeadLetters.map((d) => ({ ...d, processor })).reverse())
    .sort((a, b) => b.produced_at.localeCompare(a.produced_at));
  const deadColumns: Column<DeadLetter>[] = [
    { key: 'produced_at', label: 'Produced', value: (d) => d.produced_at, render: (d) => fmtTime(d.produced_at) },
    { key: 'processor', label: 'Processor', value: (d) => d.processor },
    { key: 'where', label: 'Partition · offset', value: (d) => `${d.partition} · ${d.offset}` },
    { key: 'key', label: 'Key', value: (d) => d.key },
    { key: 'reason', label: 'Reason', value: (d) => d.reason },
  ];
  const u = status.uptime_cache;
  const w = status.window_cache;
  const caches: CacheRow[] = [
    { name: 'uptime buckets', enabled: u.enabled, bytes: u.bytes, maxBytes: u.max_bytes, entries: u.pairs, hits: u.bucket_hits, misses: u.bucket_misses },
    { name: 'window pieces', enabled: w.enabled, bytes: w.bytes, maxBytes: w.max_bytes, entries: w.pieces, hits: w.piece_hits, misses: w.piece_misses },
  ];
  const cacheColumns: Column<CacheRow>[] = [
    { key: 'name', label: 'Cache', value: (r) => r.name },
    { key: 'enabled', label: 'On', value: (r) => (r.enabled ? 'yes' : 'no') },
    { key: 'bytes', label: 'Held (MiB)', value: (r) => r.bytes, render: (r) => fmtNum(r.bytes / MIB), numeric: true },
    { key: 'maxBytes', label: 'At most (MiB)', value: (r) => r.maxBytes, render: (r) => fmtNum(r.maxBytes / MIB), numeric: true },
    { key: 'entries', label: 'Entries', value: (r) => r.entries, render: (r) => fmtNum(r.entries), numeric: true },
    { key: 'hits', label: 'Answered from it', value: (r) => r.hits, render: (r) => fmtNum(r.hits), numeric: true },
    { key: 'misses', label: 'Computed', value: (r) => r.misses, render: (r) => fmtNum(r.misses), numeric: true },
    { key: 'share', label: 'Hit share', value: hitShare, render: (r) => fmtPct(hitShare(r)), numeric: true },
  ];
  return (
    <>
      <Panel title="Processors since the service started" wide>
        <Table caption="Rows written, messages dead-lettered (with their reason, on the dead-letter topic) and skipped, per processor" columns={processorColumns} rows={processors} rowKey={(r) => r.name} />
      </Panel>
      <Panel title="Recent dead letters" wide>
        {dead.length === 0 ? (
          <p className="muted">No dead letter since the service started.</p>
        ) : (
          <Table caption={`The last ${dead.length} dead letters, newest first (each processor's last 20; its topic's .dlq twin holds them all, with the message)`} columns={deadColumns} rows={dead} rowKey={(d) => `${d.processor} ${d.partition} ${d.offset}`} />
        )}
      </Panel>
      <Panel title="Rollups">
        <dl className="facts">
          <dt>Hour and day rows complete before</dt><dd>{fmtTime(status.rollups.rolled_up_to)} UTC</dd>
          <dt>Market endpoints plan with</dt><dd>{fmtTime(status.rollups.market_rolled_up_to)} UTC</dd>
        </dl>
      </Panel>
      <Panel title="Market caches">
        <Table caption="Sealed market data kept between requests" columns={cacheColumns} rows={caches} rowKey={(r) => r.name} />
      </Panel>
    </>
  );
}

const WINDOWS = { '1 hour': 60, '6 hours': 360, '24 hours': 1440 } as const;
type WindowName = keyof typeof WINDOWS;

/** One pair's stored minutes over a window (ending now, or when asked): how many hold data, the last, and the newest rows. */
function PairMinutes() {
  const scope = useScope();
  const pairs = (scope.data?.assets ?? []).flatMap((a) => scope.data?.pairsOf(a) ?? []);
  // The pair, window and end in the address, as every view's choices: kept on reload.
  const [q, set] = useSearchParams();
  const chosen = q.get('pair') ?? '';
  const setChosen = (v: string) => set({ pair: v });
  const span = pick(Object.keys(WINDOWS) as WindowName[], q.get('window'), '1 hour');
  const setSpan = (v: WindowName) => set({ window: v === '1 hour' ? null : v });
  /** The window's end, a datetime-local value read as UTC; empty: now. */
  const ending = q.get('ending') ?? '';
  const setEnding = (v: string) => set({ ending: v || null });
  const key = chosen || (pairs[0] ? `${pairs[0].exchange} ${pairs[0].pair}` : '');
  const [exchange = '', pair = ''] = key.split(' ');
  const minutes = useQuery({
    queryKey: ['orderbook-minutes', exchange, pair, span, ending],
    enabled: !!exchange,
    queryFn: async () => {
      // The window ends on a minute's start (now: the current one), so it counts whole minutes.
      const end = Math.floor((ending ? Date.parse(`${ending}Z`) : Date.now()) / MINUTE_MS) * MINUTE_MS;
      const time_start = new Date(end - WINDOWS[span] * MINUTE_MS).toISOString();
      const rows = unwrap(await api.GET('/v1/admin/orderbook/minutes/', { params: { query: { exchange, pair, time_start, time_end: new Date(end).toISOString() } } }));
      return { rows: [...rows].sort((a, b) => a.minute.localeCompare(b.minute)), minutes: WINDOWS[span] };
    },
  });
  const columns: Column<Minute>[] = [
    { key: 'minute', label: 'Minute', value: (r) => r.minute, render: (r) => fmtTime(r.minute) },
    { key: 'samples', label: 'Snapshots', value: (r) => r.samples, render: (r) => fmtNum(r.samples), numeric: true },
    { key: 'mid', label: 'Mean mid', value: (r) => r.mid ?? null, render: (r) => fmtPrice(r.mid), numeric: true },
    { key: 'spread_bps', label: 'Mean spread (bps)', value: (r) => r.spread_bps ?? null, render: (r) => fmtNum(r.spread_bps), numeric: true },
  ];
  return (
    <Panel title="Stored order-book minutes" wide>
      <form className="controls" aria-label="Stored minutes of" onSubmit={(e) => e.preventDefault()}>
        <label>
          Pair
          <select value={key} onChange={(e) => setChosen(e.target.value)}>
            {pairs.map((p) => <option key={`${p.exchange} ${p.pair}`} value={`${p.exchange} ${p.pair}`}>{scope.data?.exchangeName(p.exchange)} {p.pair}</option>)}
          </select>
        </label>
        <label>
          Window
          <select value={span} onChange={(e) => setSpan(e.target.value as WindowName)}>
            {Object.keys(WINDOWS).map((w) => <option key={w}>{w}</option>)}
          </select>
        </label>
        <label>
          Ending (UTC, empty: now)
          <input type="datetime-local" value={ending} onChange={(e) => setEnding(e.target.value)} />
        </label>
      </form>
      <QueryState query={minutes}>
        {({ rows, minutes: all }) => (
          <>
            <p>
              {fmtNum(rows.length)} of {fmtNum(all)} minutes hold data{rows.length > 0 && `; the last ${fmtTime(rows.at(-1)!.minute)} UTC`}. A minute is written once its lateness has passed.
            </p>
            {rows.length > 0 && <Table caption="The newest stored minutes" columns={columns} rows={rows.slice(-15).reverse()} rowKey={(r) => r.minute} />}
          </>
        )}
      </QueryState>
    </Panel>
  );
}
