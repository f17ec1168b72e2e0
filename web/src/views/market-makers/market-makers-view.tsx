// Market makers: per market maker and pair, what it reported against what was measured from
// its own orders and fills (reconciliation), per bucket and over the window, its depth on
// each side measured from its own orders, its coverage of the market, and the
// reconciliation's flags at a glance; over a lookback or a range (a month a market maker
// invoices). Each role sees what the API answers it: a market maker its own values, a
// project every market maker on its assets.
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { api, col, unwrap, type QueryOf, type Schemas } from '../../api/client';
import { LineChart, type Series } from '../../charts/line';
import { useSearchParams } from '../../router';
import { INTERVAL_NAMES, MM_INTERVALS, MM_LOOKBACKS, pick, Select } from '../../ui/choices';
import { CsvButton } from '../../ui/csv-button';
import { fmtPct, fmtUsd } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column } from '../../ui/table';
import { LEVELS, levelOf } from '../markets/params';

type ReconciliationRow = Schemas['ReconciliationRow'];
type CoverageRow = Schemas['MarketMakerSummaryRow'];
type DepthRow = Schemas['TrustedDepthRow'];
type ReconciliationQuery = QueryOf<'/v2/organizations/market-maker-metrics/reconciliation/'>;
type WindowQuery = Pick<ReconciliationQuery, 'lookback' | 'time_start' | 'time_end'>;

const keyOf = (r: ReconciliationRow | CoverageRow | DepthRow) => `${r.organization.name} · ${r.exchange} ${r.pair}`;

export default function MarketMakersView() {
  const [q, set] = useSearchParams();
  const lookback = pick(MM_LOOKBACKS, q.get('lookback'), '1-day');
  // A range (UTC, as the API reads a time without a zone) in place of the lookback.
  const start = q.get('start') ?? '';
  const end = q.get('end') ?? '';
  const window: WindowQuery = start ? { time_start: start, ...(end && { time_end: end }) } : { lookback };
  const interval = pick(MM_INTERVALS, q.get('interval'), '1h');
  const level = levelOf(q.get('bps')) ?? 10;
  const bid = `bid_${level}bps`;
  const ask = `ask_${level}bps`;
  const whole: ReconciliationQuery = { ...window, bps: [level], interval: 'a' };
  const bucketed: ReconciliationQuery = { ...window, bps: [level], interval };

  const reconciliation = useQuery({ queryKey: ['reconciliation', whole], queryFn: async () => unwrap(await api.GET('/v2/organizations/market-maker-metrics/reconciliation/', { params: { query: whole } })) });
  const perBucket = useQuery({ queryKey: ['reconciliation', bucketed], queryFn: async () => unwrap(await api.GET('/v2/organizations/market-maker-metrics/reconciliation/', { params: { query: bucketed } })) });
  const summary = useQuery({ queryKey: ['mm-summary', whole], queryFn: async () => unwrap(await api.GET('/v2/organizations/market-maker-metrics/summary/', { params: { query: whole } })) });
  const depth = useQuery({ queryKey: ['trusted-depth', whole], queryFn: async () => unwrap(await api.GET('/v2/organizations/trusted-metrics/depth/', { params: { query: whole } })) });

  const series = useMemo<Series[]>(() => {
    const by = new Map<string, { reported: [number, number | null][]; trusted: [number, number | null][] }>();
    for (const r of perBucket.data ?? []) {
      const k = keyOf(r);
      const e = by.get(k) ?? { reported: [], trusted: [] };
      const t = Date.parse(r.timestamp ?? '');
      e.reported.push([t, col(r, `${bid}_reported`)]);
      e.trusted.push([t, col(r, `${bid}_trusted`)]);
      by.set(k, e);
    }
    return [...by].flatMap(([k, e]) => [
      { name: `${k} measured`, points: e.trusted },
      { name: `${k} reported`, points: e.reported, dashed: true },
    ]);
  }, [perBucket.data, bid]);

  const reconColumns: Column<ReconciliationRow>[] = [
    { key: 'who', label: 'Market maker · pair', value: keyOf },
    { key: 'flag', label: 'Reports', value: (r) => (r.flag ? 1 : 0), render: (r) => (r.flag ? <span className="badge flag">overstated: {r.flagged.join(', ')}</span> : <span className="badge ok">match</span>) },
    { key: 'volume_reported', label: 'Volume reported', value: (r) => col(r, 'volume_reported'), render: (r) => fmtUsd(col(r, 'volume_reported')), numeric: true },
    { key: 'volume_trusted', label: 'Volume measured', value: (r) => col(r, 'volume_trusted'), render: (r) => fmtUsd(col(r, 'volume_trusted')), numeric: true },
    { key: `${bid}_reported`, label: `Bid ${level} bps reported`, value: (r) => col(r, `${bid}_reported`), render: (r) => fmtUsd(col(r, `${bid}_reported`)), numeric: true },
    { key: `${bid}_trusted`, label: `Bid ${level} bps measured`, value: (r) => col(r, `${bid}_trusted`), render: (r) => fmtUsd(col(r, `${bid}_trusted`)), numeric: true },
    { key: `${bid}_diff_pct`, label: 'Bid gap', value: (r) => col(r, `${bid}_diff_pct`), render: (r) => fmtPct(col(r, `${bid}_diff_pct`)), numeric: true },
  ];
  const depthColumns: Column<DepthRow>[] = [
    { key: 'who', label: 'Market maker · pair', value: keyOf },
    { key: bid, label: `Bid ${level} bps`, value: (r) => col(r, bid), render: (r) => fmtUsd(col(r, bid)), numeric: true },
    { key: ask, label: `Ask ${level} bps`, value: (r) => col(r, ask), render: (r) => fmtUsd(col(r, ask)), numeric: true },
  ];
  const coverageColumns: Column<CoverageRow>[] = [
    { key: 'who', label: 'Market maker · pair', value: (r) => `${keyOf(r)}${r.source === 'wallet' ? ` (wallet ${r.wallet_number ?? ''})` : ''}` },
    { key: 'source', label: 'Source', value: (r) => (r.is_trusted ? 'measured' : 'reported') },
    { key: 'volume', label: 'Volume', value: (r) => r.volume, render: (r) => fmtUsd(r.volume), numeric: true },
    { key: 'volume_coverage', label: 'Volume coverage', value: (r) => r.volume_coverage, render: (r) => fmtPct(r.volume_coverage), numeric: true },
    { key: bid, label: `Bid ${level} bps`, value: (r) => col(r, bid), render: (r) => fmtUsd(col(r, bid)), numeric: true },
    { key: `${bid}_coverage`, label: `Bid ${level} bps coverage`, value: (r) => col(r, `${bid}_coverage`), render: (r) => fmtPct(col(r, `${bid}_coverage`)), numeric: true },
  ];
  type CsvPath = '/v2/organizations/market-maker-metrics/reconciliation/' | '/v2/organizations/market-maker-metrics/summary/' | '/v2/organizations/trusted-metrics/depth/' | '/v2/organizations/reported-metrics/volume/';
  const csv = (path: CsvPath, query: ReconciliationQuery, filename: string, text?: string) =>
    <CsvButton label={filename} filename={filename} text={text} load={() => api.GET(path, { params: { query: { ...query, type: 'csv', filename } }, parseAs: 'blob' })} />;
  const { bps: _bps, ...volumeQuery } = bucketed;

  return (
    <>
      <form className="controls" aria-label="Market maker parameters" onSubmit={(e) => e.preventDefault()}>
        <Select
          label="Window"
          value={start ? 'range' : lookback}
          options={[...MM_LOOKBACKS, 'range']}
          onChange={(v) => (v === 'range' ? set({ start: new Date(Date.now() - 86_400_000).toISOString().slice(0, 16), end: null, lookback: null }) : set({ lookback: v, start: null, end: null }))}
          names={{ ...Object.fromEntries(MM_LOOKBACKS.map((l) => [l, `last ${l.replace('-', ' ')}`])), range: 'a range…' }}
        />
        {start && (
          <>
            <label>
              From (UTC)
              <input type="datetime-local" value={start.slice(0, 16)} onChange={(e) => set({ start: e.target.value })} required />
            </label>
            <label>
              To (UTC, empty: now)
              <input type="datetime-local" value={end.slice(0, 16)} onChange={(e) => set({ end: e.target.value || null })} />
            </label>
          </>
        )}
        <Select label="Interval" value={interval} options={MM_INTERVALS} names={INTERVAL_NAMES} onChange={(v) => set({ interval: v })} />
        <Select label="Level (bps)" value={String(level)} options={LEVELS.map(String)} onChange={(v) => set({ bps: v })} />
      </form>
      <div className="panels">
        <Panel title="Reported against measured" wide actions={<span>{csv('/v2/organizations/market-maker-metrics/reconciliation/', whole, 'reconciliation.csv')} {csv('/v2/organizations/reported-metrics/volume/', volumeQuery, 'reported-volume.csv', 'Reported volume CSV')}</span>}>
          <QueryState query={reconciliation} empty={(rows) => rows.length === 0}>
            {(rows) => <Table caption="Per market maker and pair over the window; flagged where a report exceeds the measurement by more than 10 %" columns={reconColumns} rows={rows} rowKey={keyOf} />}
          </QueryState>
        </Panel>
        <Panel title={`Bid depth within ${level} bps per bucket`} wide actions={csv('/v2/organizations/market-maker-metrics/reconciliation/', bucketed, 'reconciliation-buckets.csv')}>
          <QueryState query={perBucket} empty={() => series.length === 0}>
            {() => <LineChart label={`Measured (solid) and reported (dashed) bid depth within ${level} bps, USD, per market maker and pair`} series={series} unit="USD" />}
          </QueryState>
        </Panel>
        <Panel title="Depth from own orders" wide actions={csv('/v2/organizations/trusted-metrics/depth/', bucketed, 'trusted-depth.csv')}>
          <QueryState query={depth} empty={(rows) => rows.length === 0}>
            {(rows) => <Table caption={`Mean depth within ${level} bps of the mid over the minutes with orders, each market maker's wallets on a pair added`} columns={depthColumns} rows={rows} rowKey={keyOf} />}
          </QueryState>
        </Panel>
        <Panel title="Coverage of the market" wide actions={csv('/v2/organizations/market-maker-metrics/summary/', whole, 'market-makers.csv')}>
          <QueryState query={summary} empty={(rows) => rows.length === 0}>
            {(rows) => <Table caption="Volume and depth with the share of the whole market, measured values where there are any" columns={coverageColumns} rows={rows} rowKey={(r) => `${keyOf(r)} ${r.wallet_id ?? ''}`} />}
          </QueryState>
        </Panel>
      </div>
    </>
  );
}
