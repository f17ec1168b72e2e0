// Markets: one asset's pairs over a window. Depth at a level (bid and ask) and volume by
// exchange over time, price, spread and depth uptime as heatmaps, the pairs' summary, the
// leaderboard and regional volume, each with the API's CSV for the same parameters.
import type { UseQueryResult } from '@tanstack/react-query';
import { useMemo } from 'react';
import { api, col } from '../../api/client';
import { useScope } from '../../api/organizations';
import { BarChart } from '../../charts/bar';
import { HeatmapChart } from '../../charts/heatmap';
import { LineChart, type Series } from '../../charts/line';
import { useSearchParams } from '../../router';
import { CsvButton } from '../../ui/csv-button';
import { fmtNum, fmtPct, fmtPrice, fmtTime, fmtUsd } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column } from '../../ui/table';
import { MarketControls } from './controls';
import { Leaderboard } from './leaderboard';
import { pairLabel, readParams, type MarketParams } from './params';
import { depthUptimeQuery, regionalQuery, spansOf, spreadUptimeQuery, summaryQuery, useDepthUptime, useRegional, useSpreadUptime, useSummary, useSummaryPerSpan, MAX_SPANS, type DepthUptimeRow, type SpreadUptimeRow, type SummaryRow } from './queries';

export function MarketsView() {
  const scope = useScope();
  const [q, set] = useSearchParams();
  if (scope.isPending) return <p role="status" className="muted">Loading…</p>;
  if (scope.isError) return <p role="alert" className="error">{scope.error.message}</p>;
  if (scope.data.assets.length === 0) return <p>Your organizations cover no assets yet, so there are no markets to show.</p>;
  const p = readParams(q, scope.data.assets);
  const pairs = scope.data.pairsOf(p.asset);
  const exchanges = [...new Set(pairs.map((x) => x.exchange))].map((slug) => ({ slug, name: scope.data.exchangeName(slug) }));
  return (
    <>
      <MarketControls p={p} assets={scope.data.assets} exchanges={exchanges} set={set} />
      <MarketPanels p={p} />
    </>
  );
}

/** A row of a market endpoint: the summary names its exchange by reference, the uptimes by slug. */
type PairRow = { exchange: string | { slug: string }; pair: string };
const slugOf = (r: PairRow) => (typeof r.exchange === 'string' ? r.exchange : r.exchange.slug);
/** Rows of the exchanges the user keeps shown. */
const keep = (p: MarketParams) => (r: PairRow) => p.exchanges.length === 0 || p.exchanges.includes(slugOf(r));
const labelOf = (r: PairRow) => pairLabel(slugOf(r), r.pair);

function MarketPanels({ p }: { p: MarketParams }) {
  const spread = useSpreadUptime(p);
  const depthUp = useDepthUptime(p);
  const summary = useSummary(p);
  const regional = useRegional(p);
  const spans = useMemo(() => (p.mode === 'session' ? [] : spansOf(spread.data ?? [], p)), [spread.data, p]);
  const perSpan = useSummaryPerSpan(p, spans);
  const bid = `bid_${p.level}bps`;
  const ask = `ask_${p.level}bps`;
  const zone = p.zone || 'UTC';
  const csvName = (what: string) => `${p.asset}-${what}.csv`;

  const overTime = useMemo(() => {
    const depth = new Map<string, { bid: [number, number | null][]; ask: [number, number | null][] }>();
    const volume = new Map<string, (number | null)[]>();
    spans.forEach((s, i) => {
      for (const r of (perSpan[i]?.data ?? []).filter(keep(p))) {
        const k = labelOf(r);
        const d = depth.get(k) ?? { bid: [], ask: [] };
        d.bid.push([Date.parse(s.start), col(r, bid)]);
        d.ask.push([Date.parse(s.start), col(r, ask)]);
        depth.set(k, d);
        const v = volume.get(k) ?? spans.map(() => null);
        v[i] = r.volume;
        volume.set(k, v);
      }
    });
    const depthSeries: Series[] = [...depth].flatMap(([k, d]) => [
      { name: `${k} bid`, points: d.bid },
      { name: `${k} ask`, points: d.ask, dashed: true },
    ]);
    return { depthSeries, volume: [...volume].map(([name, values]) => ({ name, values })), loading: perSpan.some((x) => x.isPending) };
  }, [perSpan, spans, p, bid, ask]);

  const priceSeries = useMemo<Series[]>(() => {
    const by = new Map<string, [number, number | null][]>();
    for (const r of (spread.data ?? []).filter(keep(p))) {
      const k = labelOf(r);
      by.set(k, [...(by.get(k) ?? []), [Date.parse(r.timestamp ?? ''), r.mid_price]]);
    }
    return [...by].map(([name, points]) => ({ name, points }));
  }, [spread.data, p]);

  const summaryColumns: Column<SummaryRow>[] = [
    { key: 'pair', label: 'Pair', value: labelOf },
    { key: 'volume', label: 'Volume', value: (r) => r.volume, render: (r) => fmtUsd(r.volume), numeric: true },
    { key: 'twap', label: 'TWAP', value: (r) => r.twap, render: (r) => fmtPrice(r.twap), numeric: true },
    { key: 'vwap', label: 'VWAP', value: (r) => r.vwap, render: (r) => fmtPrice(r.vwap), numeric: true },
    { key: bid, label: `Bid depth ${p.level} bps`, value: (r) => col(r, bid), render: (r) => fmtUsd(col(r, bid)), numeric: true },
    { key: ask, label: `Ask depth ${p.level} bps`, value: (r) => col(r, ask), render: (r) => fmtUsd(col(r, ask)), numeric: true },
    { key: 'tick_bps', label: 'Tick (bps)', value: (r) => r.tick_bps, render: (r) => fmtNum(r.tick_bps), numeric: true },
    { key: 'usd_open_interest', label: 'Open interest', value: (r) => r.usd_open_interest, render: (r) => fmtUsd(r.usd_open_interest), numeric: true },
  ];

  return (
    <div className="panels">
      <Panel
        title={`Depth within ${p.level} bps by exchange`}
        actions={<CsvButton label="depth by exchange (the pairs' summary)" filename={csvName('summary')} load={() => api.GET('/v2/metrics/summary/', { params: { query: { ...summaryQuery(p), type: 'csv', filename: csvName('summary') } }, parseAs: 'blob' })} />}
      >
        {p.mode === 'session' ? (
          <p className="muted">Over time, depth and volume are read per bucket from the summary, which takes a session only as a whole: see the pairs' table for the session's values.</p>
        ) : overTime.loading && overTime.depthSeries.length === 0 ? (
          <p role="status" className="muted">Loading…</p>
        ) : overTime.depthSeries.length === 0 ? (
          <p className="muted">No data for these parameters.</p>
        ) : (
          <LineChart label={`Bid and ask depth within ${p.level} bps of the mid, USD, by exchange and pair, per bucket (up to ${MAX_SPANS})`} series={overTime.depthSeries} unit="USD" zone={zone} />
        )}
      </Panel>
      <Panel title="Volume by exchange">
        {p.mode === 'session' ? null : overTime.volume.length === 0 ? (
          <p className="muted">{overTime.loading ? 'Loading…' : 'No data for these parameters.'}</p>
        ) : (
          <BarChart label="Traded volume in USD by exchange and pair, per bucket" categories={spans.map((s) => fmtTime(s.start, zone))} series={overTime.volume} unit="USD" stacked />
        )}
      </Panel>
      <Panel
        title="Price"
        actions={<CsvButton label="spread uptime and mid price" filename={csvName('spread-uptime')} load={() => api.GET('/v2/metrics/uptime/spread/', { params: { query: { ...spreadUptimeQuery(p), type: 'csv', filename: csvName('spread-uptime') } }, parseAs: 'blob' })} />}
      >
        <QueryState query={spread} empty={() => priceSeries.length === 0}>
          {() => <LineChart label="Mean mid price per bucket by exchange and pair" series={priceSeries} unit="price" zone={zone} />}
        </QueryState>
      </Panel>
      <UptimeHeatmap title={`Spread uptime within ${p.level} bps`} query={spread} column={`${p.level}bps`} p={p} zone={zone}
        csv={<CsvButton label="spread uptime" filename={csvName('spread-uptime')} load={() => api.GET('/v2/metrics/uptime/spread/', { params: { query: { ...spreadUptimeQuery(p), type: 'csv', filename: csvName('spread-uptime') } }, parseAs: 'blob' })} />} />
      <UptimeHeatmap title={`Depth uptime: $${p.amount.toLocaleString('en-US')} on both sides within ${p.level} bps`} query={depthUp} column={`${p.amount}_at_${p.level}bps`} p={p} zone={zone}
        csv={<CsvButton label="depth uptime" filename={csvName('depth-uptime')} load={() => api.GET('/v2/metrics/uptime/depth/', { params: { query: { ...depthUptimeQuery(p), type: 'csv', filename: csvName('depth-uptime') } }, parseAs: 'blob' })} />} />
      <Panel
        title="Pairs over the window"
        wide
        actions={<CsvButton label="pairs over the window" filename={csvName('summary')} load={() => api.GET('/v2/metrics/summary/', { params: { query: { ...summaryQuery(p), type: 'csv', filename: csvName('summary') } }, parseAs: 'blob' })} />}
      >
        <QueryState query={summary}>
          {(rows) => <Table caption={`${p.asset} pairs: summary over the window`} columns={summaryColumns} rows={rows.filter(keep(p))} rowKey={labelOf} />}
        </QueryState>
      </Panel>
      <Panel
        title="Regional volume"
        actions={<CsvButton label="regional volume" filename={csvName('regional-volume')} load={() => api.GET('/v2/metrics/volume/regional/', { params: { query: { ...regionalQuery(p), type: 'csv', filename: csvName('regional-volume') } }, parseAs: 'blob' })} />}
      >
        <QueryState query={regional} empty={(d) => !d || d.total_volume === 0}>
          {(d) => {
            // The endpoint answers every exchange of the asset, each with its region: the
            // regions of the exchanges shown, their shares of those exchanges' volume.
            const shown = Object.entries(d!.exchanges).filter(([slug]) => p.exchanges.length === 0 || p.exchanges.includes(slug));
            const total = shown.reduce((s, [, e]) => s + e.volume, 0);
            const byRegion = new Map<string, number>();
            for (const [, e] of shown) byRegion.set(e.region, (byRegion.get(e.region) ?? 0) + e.volume);
            const regions = [...byRegion].map(([region, volume]): [string, { volume: number; percentage: number }] => [region, { volume, percentage: total > 0 ? (100 * volume) / total : 0 }]).sort((a, b) => b[1].volume - a[1].volume);
            return (
              <>
                <BarChart label={`${p.asset} traded volume by exchange region, USD`} categories={regions.map(([r]) => r)} series={[{ name: 'volume', values: regions.map(([, v]) => v.volume) }]} unit="USD" />
                <Table
                  caption={p.exchanges.length === 0 ? 'Volume by region' : 'Volume by region, of the exchanges shown (the CSV has them all)'}
                  columns={[
                    { key: 'region', label: 'Region', value: (r: (typeof regions)[number]) => r[0] },
                    { key: 'volume', label: 'Volume', value: (r) => r[1].volume, render: (r) => fmtUsd(r[1].volume), numeric: true },
                    { key: 'share', label: 'Share', value: (r) => r[1].percentage, render: (r) => fmtPct(r[1].percentage), numeric: true },
                  ]}
                  rows={regions}
                  rowKey={(r) => r[0]}
                />
              </>
            );
          }}
        </QueryState>
      </Panel>
      <Leaderboard p={p} exchanges={p.exchanges} />
      <p className="muted note">Buckets are shown in {zone}. Values refresh every 15 s.</p>
    </div>
  );
}

function UptimeHeatmap({ title, query, column, p, zone, csv }: { title: string; query: UseQueryResult<SpreadUptimeRow[] | DepthUptimeRow[]>; column: string; p: MarketParams; zone: string; csv: React.ReactNode }) {
  const grid = useMemo(() => {
    const rows: (SpreadUptimeRow | DepthUptimeRow)[] = (query.data ?? []).filter(keep(p));
    const buckets = [...new Set(rows.map((r) => r.timestamp ?? ''))].sort((a, b) => Date.parse(a) - Date.parse(b));
    const labels = [...new Set(rows.map(labelOf))].sort();
    const cells: [number, number, number | null][] = rows.map((r) => [buckets.indexOf(r.timestamp ?? ''), labels.indexOf(labelOf(r)), col(r, column)]);
    return { buckets: buckets.map((b) => fmtTime(b, zone)), labels, cells };
  }, [query.data, p, column, zone]);
  return (
    <Panel title={title} actions={csv}>
      <QueryState query={query} empty={() => grid.cells.length === 0}>
        {() => <HeatmapChart label={`${title}: percent of minutes, by exchange and pair (rows) and bucket (columns)`} buckets={grid.buckets} rows={grid.labels} cells={grid.cells} />}
      </QueryState>
    </Panel>
  );
}
