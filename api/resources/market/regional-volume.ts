// POST/GET /v2/metrics/volume/regional/ (specification 4.5): trade volume by exchange
// region. With `a`, an object keyed by asset with its total, per-region and per-exchange
// volumes and shares; with a bucketed interval, a row per bucket and asset with the volume
// of each region. CSV (docs/metrics.md): with `a` a row per asset and exchange, with a
// bucketed interval the JSON rows with a column per region.
import { timeColumnNames, timestampOf } from '../../../domain/market/timestamps.ts';
import { badRequest } from '../../http/errors.ts';
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { assetsOf, parseRequest } from './params.ts';
import { volume } from '../../../domain/market/values.ts';
import type { Row } from './rows.ts';
import { validators } from './schemas.ts';
import { pairsOf, type MarketHandler, type MarketServices } from './services.ts';

interface AssetVolumes {
  total_volume: number;
  regions: Record<string, { volume: number; percentage: number }>;
  exchanges: Record<string, { region: string; volume: number; percentage: number }>;
}

export function regionalVolume(s: MarketServices): MarketHandler {
  return async (ctx, raw, { scope }) => {
    const out = wantsCsv(ctx);
    const { params, window, problems } = parseRequest(raw, validators.any, s.deps.now(), await s.deps.rolledUp.market());
    const assets = assetsOf(params, scope.assets, problems);
    if (problems.any()) throw badRequest(problems.fields());

    const pairs = pairsOf(scope, assets);
    const trades = await s.partials.read('trade', { pairs, interval: window.interval, zone: window.zone, pieces: window.plan.pieces });
    const assetOf = new Map(pairs.map((x) => [`${x.exchange}\u0000${x.pair}`, x.asset]));
    const regionOf = (exchange: string) => scope.exchanges.get(exchange)?.region || 'unknown';
    if (window.interval === 'a') {
      const result: Record<string, AssetVolumes> = {};
      for (const a of assets) result[a] = { total_volume: 0, regions: {}, exchanges: {} };
      for (const t of trades) {
        const entry = result[assetOf.get(`${t.exchange}\u0000${t.pair}`)!]!;
        const v = volume(t) ?? 0;
        const region = regionOf(t.exchange);
        entry.total_volume += v;
        (entry.regions[region] ??= { volume: 0, percentage: 0 }).volume += v;
        (entry.exchanges[t.exchange] ??= { region, volume: 0, percentage: 0 }).volume += v;
      }
      for (const entry of Object.values(result)) {
        for (const r of Object.values(entry.regions)) r.percentage = entry.total_volume > 0 ? (100 * r.volume) / entry.total_volume : 0;
        for (const e of Object.values(entry.exchanges)) e.percentage = entry.total_volume > 0 ? (100 * e.volume) / entry.total_volume : 0;
      }
      if (out.csv) sendRows(ctx, ...wholeWindowCsv(result), out);
      else ctx.body = result;
      return;
    }
    const buckets = new Map<string, { b: number; row: Row & { asset: string; total_volume: number; regions: Record<string, number> } }>();
    for (const t of trades) {
      const asset = assetOf.get(`${t.exchange}\u0000${t.pair}`)!;
      const k = `${t.b}\u0000${asset}`;
      let row = buckets.get(k)?.row;
      if (!row) {
        row = { ...timestampOf(window, t.b), asset, total_volume: 0, regions: {} };
        buckets.set(k, { b: t.b, row });
      }
      const v = volume(t) ?? 0;
      row.total_volume += v;
      row.regions[regionOf(t.exchange)] = (row.regions[regionOf(t.exchange)] ?? 0) + v;
    }
    // A bucket is first met at the first pair that traded in it: the rows in time order, then asset.
    const rows = [...buckets.values()].sort((x, y) => x.b - y.b || (x.row.asset < y.row.asset ? -1 : x.row.asset > y.row.asset ? 1 : 0)).map((x) => x.row);
    if (!out.csv) {
      ctx.body = rows;
      return;
    }
    // A column per region seen, in name order; a region without trades in a bucket is 0.
    const regions = [...new Set(rows.flatMap((r) => Object.keys(r.regions)))].sort();
    const columns = [...timeColumnNames(window), 'asset', 'total_volume', ...regions];
    sendRows(ctx, rows.map(({ regions: byRegion, ...r }) => ({ ...r, ...Object.fromEntries(regions.map((name) => [name, byRegion[name] ?? 0])) })), columns, out);
  };
}

/** The whole-window answer as CSV rows: one per asset and exchange (an asset without trades: one row of its total). */
function wholeWindowCsv(result: Record<string, AssetVolumes>): [Row[], string[]] {
  const columns = ['asset', 'total_volume', 'region', 'region_volume', 'region_percentage', 'exchange', 'volume', 'percentage'];
  const rows: Row[] = [];
  for (const [asset, entry] of Object.entries(result)) {
    const exchanges = Object.entries(entry.exchanges);
    if (exchanges.length === 0) rows.push({ asset, total_volume: entry.total_volume, region: null, region_volume: null, region_percentage: null, exchange: null, volume: null, percentage: null });
    for (const [exchange, e] of exchanges) {
      const region = entry.regions[e.region]!;
      rows.push({ asset, total_volume: entry.total_volume, region: e.region, region_volume: region.volume, region_percentage: region.percentage, exchange, volume: e.volume, percentage: e.percentage });
    }
  }
  return [rows, columns];
}
