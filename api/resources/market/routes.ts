// The market endpoints (specification 4.5-4.7, 4.13, 4.14): GET with the parameters in the
// query string, POST with them in a JSON body (lists as arrays or comma-separated strings).
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { LEVELS_BPS, UPTIME_AMOUNTS_USD } from '../../../processors/metrics/levels.ts';
import type { Pair } from '../../../lib/repositories/reference.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate, principalOf } from '../../http/auth.ts';
import { badRequest } from '../../http/errors.ts';
import { sendRows, wantsCsv } from '../../market/csv.ts';
import { Problems, list, parseAmounts, parseAssets, parseLevels, parseWindow, type RawParams } from '../../market/params.ts';
import { MarketRepository, type BookPartial, type DerivativePartial, type TradePartial, type UptimeQuery } from '../../market/query.ts';
import { blankRow, depthColumnNames, depthColumnsWriter, derivatives, priceChange, tick, twap, volume, vwap, type Row } from '../../market/rows.ts';
import { timestampOf } from '../../market/timestamps.ts';
import { UptimeRows } from '../../market/uptime.ts';
import { WindowPartials } from '../../market/window-partials.ts';
import { callerScope } from '../../market/scope.ts';
import { planBuckets, type Interval } from '../../market/window.ts';
import { presentExchange } from '../presenters.ts';

const PAGE_SIZE = 20;
const MAX_EXCHANGES = 100;
const SORT_COLUMNS = ['volume', 'price_change', 'usd_open_interest', 'funding_rate_8h', 'tick_bps'];

type Handler = (ctx: Context, raw: RawParams) => Promise<void>;

/** Registers the GET and POST forms of one endpoint. */
function both(router: Router, deps: ApiDeps, path: string, handler: Handler): void {
  const auth: Middleware = authenticate(deps, { apiKeyScope: 'metrics:read' });
  router.get(path, auth, (ctx) => handler(ctx, { ...ctx.query }));
  router.post(path, auth, (ctx) => {
    const body = ctx.request.body;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw badRequest({ non_field_errors: ['Expected a JSON object.'] });
    }
    return handler(ctx, { ...((body as RawParams | undefined) ?? {}) });
  });
}

const key = (exchange: string, pair: string, b: number) => `${exchange}\u0000${pair}\u0000${b}`;
function byKey<T extends { exchange: string; pair: string; b: number }>(rows: T[]): Map<string, T> {
  return new Map(rows.map((r) => [key(r.exchange, r.pair, r.b), r]));
}

export function marketRoutes(router: Router, deps: ApiDeps): void {
  const market = new MarketRepository(deps.ch);
  const uptime = new UptimeRows(market, deps.uptimeCache, { latenessMs: deps.config.latenessMs });
  const partials = new WindowPartials(market, deps.windowCache, { latenessMs: deps.config.latenessMs });

  /** Window, assets and the caller's pairs of those assets: shared by every endpoint. */
  async function common(ctx: Context, raw: RawParams, opts: { allowed?: readonly Interval[]; assetsMax?: number; leaderboard?: boolean } = {}) {
    const p = new Problems();
    const user = principalOf(ctx.state).user;
    const scope = await callerScope(deps, user);
    const window = parseWindow(raw, Date.now(), { allowed: opts.allowed });
    let assets: string[];
    if (opts.leaderboard && raw.assets === undefined) {
      // Regular users get their first 100 assets by symbol; staff all of them.
      assets = user.is_staff ? scope.assets : scope.assets.slice(0, 100);
    } else {
      assets = parseAssets(raw, scope.assets, p, { max: opts.leaderboard && user.is_staff ? Infinity : (opts.assetsMax ?? 100) });
    }
    const levels = parseLevels(raw, p);
    return { p, scope, window, assets, levels };
  }

  function pairsOf(scope: { pairs: readonly Pair[] }, assets: string[]): Pair[] {
    const set = new Set(assets);
    return scope.pairs.filter((x) => set.has(x.asset));
  }

  // POST/GET /v2/metrics/summary/: one row per pair over the window (interval `a` only).
  both(router, deps, '/v2/metrics/summary/', async (ctx, raw) => {
    const out = wantsCsv(ctx);
    const { p, scope, window, assets, levels } = await common(ctx, raw, { allowed: ['a'] });
    p.throwIfAny();
    const pairs = pairsOf(scope, assets);
    const { books, trades, derivatives: derivs } = await partials.window({ pairs, interval: window.interval, zone: window.zone, pieces: window.plan.pieces });
    const bm = byKey(books);
    const tm = byKey(trades);
    const dm = byKey(derivs);
    const columns = ['asset', 'exchange', 'pair', 'volume', 'twap', 'vwap', 'funding_rate_8h', 'usd_open_interest', 'tick_bps', 'tick_bps_status', 'tick_bps_samples', ...depthColumnNames(levels, ['bid', 'n_bid', 'ask', 'n_ask'])];
    const blank = blankRow(columns);
    const writeDepth = depthColumnsWriter(levels, ['bid', 'n_bid', 'ask', 'n_ask']);
    const rows: Row[] = [];
    for (const pair of pairs) {
      const k = key(pair.exchange, pair.pair, 0);
      const b = bm.get(k);
      const t = tm.get(k);
      if (!b && !t) continue;
      const row = blank();
      row.asset = pair.asset;
      row.exchange = presentExchange(scope.exchanges.get(pair.exchange) ?? { slug: pair.exchange, name: pair.exchange, icon_url: '', region: '' });
      row.pair = pair.pair;
      row.volume = volume(t);
      row.twap = twap(b);
      row.vwap = vwap(t);
      Object.assign(row, derivatives(dm.get(k)), tick(b));
      writeDepth(b, row);
      rows.push(row);
    }
    sendRows(ctx, rows, columns, out);
  });

  // POST/GET /v2/leaderboard/: pairs across exchanges, ranked, 20 a page.
  both(router, deps, '/v2/leaderboard/', async (ctx, raw) => {
    const out = wantsCsv(ctx);
    const { p, scope, window, assets, levels } = await common(ctx, raw, { leaderboard: true });
    const exchanges = list(raw, 'exchanges', p);
    if (exchanges && exchanges.length > MAX_EXCHANGES) p.add('exchanges', `Ensure this field has no more than ${MAX_EXCHANGES} elements.`);
    for (const e of exchanges ?? []) if (!scope.exchanges.has(e)) p.add('exchanges', `"${e}" is not a known exchange.`);
    const marketType = typeof raw.market_type === 'string' && raw.market_type !== '' ? raw.market_type : 'all';
    if (!['all', 'spot', 'perp'].includes(marketType)) p.add('market_type', `"${String(raw.market_type)}" is not a valid choice; expected one of: all, spot, perp.`);
    const pageRaw = raw.page === undefined || raw.page === '' ? 1 : Number(raw.page);
    if (!Number.isInteger(pageRaw) || pageRaw < 1) p.add('page', 'A valid integer >= 1 is required.');
    const sortBy = typeof raw.sort_by === 'string' && raw.sort_by !== '' ? raw.sort_by : 'volume';
    const depthSort = /^(bid|ask)_(\d+(?:\.\d+)?)bps$/.exec(sortBy);
    if (!SORT_COLUMNS.includes(sortBy) && !(depthSort && (LEVELS_BPS as readonly number[]).includes(Number(depthSort[2])))) {
      p.add('sort_by', `"${sortBy}" is not sortable; use one of ${SORT_COLUMNS.join(', ')}, or bid_<L>bps / ask_<L>bps with L in ${LEVELS_BPS.join(', ')}.`);
    }
    const direction = typeof raw.sort_direction === 'string' && raw.sort_direction !== '' ? raw.sort_direction : 'desc';
    if (direction !== 'asc' && direction !== 'desc') p.add('sort_direction', `"${String(raw.sort_direction)}" is not a valid choice; expected one of: asc, desc.`);
    p.throwIfAny();

    const pairs = pairsOf(scope, assets).filter(
      (x) => (!exchanges || exchanges.includes(x.exchange)) && (marketType === 'all' || x.market_type === marketType),
    );
    // The leaderboard ranks over the whole window whatever the interval.
    const plan = window.interval === 'a' ? window.plan : planBuckets('a', window.ranges, window.zone);
    const { books, trades, derivatives: derivs } = await partials.window({ pairs, interval: 'a', zone: window.zone, pieces: plan.pieces });
    const bm = byKey(books);
    const tm = byKey(trades);
    const dm = byKey(derivs);
    const columns = ['asset', 'exchange', 'pair', 'price_change', 'volume', 'usd_open_interest', 'funding_rate_8h', 'tick_bps', 'tick_bps_status', 'tick_bps_samples', ...depthColumnNames(levels, ['bid', 'ask'])];
    const blank = blankRow(columns);
    const writeDepth = depthColumnsWriter(levels, ['bid', 'ask']);
    // Sorting needs the level it sorts by, whatever `bps` returns.
    const writeSortDepth = depthSort ? depthColumnsWriter([Number(depthSort[2])], [depthSort[1] as 'bid' | 'ask']) : undefined;
    const all: { row: Row; sortValue: number | null }[] = [];
    for (const pair of pairs) {
      const k = key(pair.exchange, pair.pair, 0);
      const b = bm.get(k);
      const t = tm.get(k);
      if (!b && !t) continue;
      const row = blank();
      row.asset = pair.asset;
      row.exchange = pair.exchange;
      row.pair = pair.pair;
      row.price_change = priceChange(b);
      row.volume = volume(t);
      Object.assign(row, derivatives(dm.get(k)), tick(b));
      writeDepth(b, row);
      let sortValue = row[sortBy] as number | null | undefined;
      if (writeSortDepth) {
        const sortRow: Row = {};
        writeSortDepth(b, sortRow);
        sortValue = sortRow[sortBy] as number | null;
      }
      all.push({ row, sortValue: sortValue ?? null });
    }
    all.sort((x, y) => {
      // Rows without a value go last in either direction.
      if (x.sortValue === null || y.sortValue === null) return x.sortValue === null ? (y.sortValue === null ? 0 : 1) : -1;
      const d = x.sortValue - y.sortValue;
      return direction === 'asc' ? d : -d;
    });
    sendRows(ctx, all.slice((pageRaw - 1) * PAGE_SIZE, pageRaw * PAGE_SIZE).map((x) => x.row), columns, out);
  });

  // POST/GET /v2/metrics/uptime/spread/: share of minutes with the spread within each level.
  both(router, deps, '/v2/metrics/uptime/spread/', async (ctx, raw) => {
    const out = wantsCsv(ctx);
    const { p, scope, window, assets, levels } = await common(ctx, raw);
    p.throwIfAny();
    await sendUptime(ctx, { kind: 'spread', pairs: pairsOf(scope, assets), window, levels }, out);
  });

  // POST/GET /v2/metrics/uptime/depth/: share of minutes with both sides above each amount.
  both(router, deps, '/v2/metrics/uptime/depth/', async (ctx, raw) => {
    const out = wantsCsv(ctx);
    const { p, scope, window, assets, levels } = await common(ctx, raw);
    const amounts = parseAmounts(raw, p);
    p.throwIfAny();
    if (!amounts.every((a) => (UPTIME_AMOUNTS_USD as readonly number[]).includes(a))) {
      // Other amounts are only answerable from minute rows (query.ts reads those alone): within a month.
      const span = window.ranges[window.ranges.length - 1]![1] - window.ranges[0]![0];
      if (span > 31 * 86_400_000) {
        throw badRequest({ amounts: [`Amounts other than ${UPTIME_AMOUNTS_USD.join(', ')} are computed from minute data: the window may span at most 31 days.`] });
      }
    }
    await sendUptime(ctx, { kind: 'depth', pairs: pairsOf(scope, assets), window, levels, amounts }, out);
  });

  /** Uptime rows: as ClickHouse wrote them for JSON (sealed buckets kept between requests), through csv-stringify for CSV. */
  async function sendUptime(ctx: Context, q: UptimeQuery, out: { csv: boolean; filename: string }): Promise<void> {
    if (out.csv) {
      const { rows, columns } = await market.uptimeRows(q);
      sendRows(ctx, rows, columns, out);
      return;
    }
    const body = await uptime.json(q);
    ctx.type = 'application/json';
    ctx.body = body;
  }

  // POST/GET /v2/metrics/volume/regional/: trade volume by exchange region.
  both(router, deps, '/v2/metrics/volume/regional/', async (ctx, raw) => {
    const { p, scope, window, assets } = await common(ctx, raw);
    p.throwIfAny();
    const pairs = pairsOf(scope, assets);
    const trades = await market.trades({ pairs, interval: window.interval, zone: window.zone, pieces: window.plan.pieces });
    const assetOf = new Map(pairs.map((x) => [`${x.exchange}\u0000${x.pair}`, x.asset]));
    const regionOf = (exchange: string) => scope.exchanges.get(exchange)?.region || 'unknown';
    if (window.interval === 'a') {
      const result: Record<string, { total_volume: number; regions: Record<string, { volume: number; percentage: number }>; exchanges: Record<string, { region: string; volume: number; percentage: number }> }> = {};
      for (const a of assets) result[a] = { total_volume: 0, regions: {}, exchanges: {} };
      for (const t of trades) {
        const asset = assetOf.get(`${t.exchange}\u0000${t.pair}`)!;
        const v = volume(t) ?? 0;
        const entry = result[asset]!;
        const region = regionOf(t.exchange);
        entry.total_volume += v;
        (entry.regions[region] ??= { volume: 0, percentage: 0 }).volume += v;
        (entry.exchanges[t.exchange] ??= { region, volume: 0, percentage: 0 }).volume += v;
      }
      for (const entry of Object.values(result)) {
        for (const r of Object.values(entry.regions)) r.percentage = entry.total_volume > 0 ? (100 * r.volume) / entry.total_volume : 0;
        for (const e of Object.values(entry.exchanges)) e.percentage = entry.total_volume > 0 ? (100 * e.volume) / entry.total_volume : 0;
      }
      ctx.body = result;
      return;
    }
    const buckets = new Map<string, Row & { regions: Record<string, number>; total_volume: number }>();
    for (const t of trades) {
      const asset = assetOf.get(`${t.exchange}\u0000${t.pair}`)!;
      const k = `${t.b}\u0000${asset}`;
      let row = buckets.get(k);
      if (!row) {
        row = { ...timestampOf(window, t.b), asset, total_volume: 0, regions: {} };
        buckets.set(k, row);
      }
      const v = volume(t) ?? 0;
      row.total_volume += v;
      row.regions[regionOf(t.exchange)] = (row.regions[regionOf(t.exchange)] ?? 0) + v;
    }
    ctx.body = [...buckets.values()];
  });
}

export type { BookPartial, DerivativePartial, TradePartial };
