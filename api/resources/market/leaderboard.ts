// POST/GET /v2/leaderboard/ (specification 4.7): pairs across exchanges ranked over the
// whole window whatever the interval, 20 a page. Regular users get their first 100 assets
// by symbol when they name none, and may name at most 100; staff have no bound.
import { LEVELS_BPS, isLevel, levelName } from '../../../domain/market/facts.ts';
import { badRequest } from '../../http/errors.ts';
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { MAX_ASSETS, assetsOf, levelsOf, parseRequest } from './params.ts';
import { derivatives, priceChange, tick, volume } from '../../../domain/market/values.ts';
import { blankRow, depthColumnNames, depthColumnsWriter, type Row } from './rows.ts';
import { validators, type Problems } from './schemas.ts';
import { pairsOf, pairsWithData, type MarketHandler, type MarketServices } from './services.ts';

const PAGE_SIZE = 20;
const SORT_COLUMNS = ['volume', 'price_change', 'usd_open_interest', 'funding_rate_8h', 'tick_bps'];

/** What `sort_by` sorts by: a column, or a depth side at a level (`bid_10.0bps` is bid_10bps). */
type SortKey = { column: string } | { side: 'bid' | 'ask'; level: number };

function sortKey(sortBy: string, problems: Problems): SortKey | undefined {
  if (SORT_COLUMNS.includes(sortBy)) return { column: sortBy };
  const depth = /^(bid|ask)_(\d+(?:\.\d+)?)bps$/.exec(sortBy);
  if (depth && isLevel(Number(depth[2]))) return { side: depth[1] as 'bid' | 'ask', level: Number(depth[2]) };
  problems.add('sort_by', `"${sortBy}" is not sortable; use one of ${SORT_COLUMNS.join(', ')}, or bid_<L>bps / ask_<L>bps with L in ${LEVELS_BPS.join(', ')}.`);
  return undefined;
}

export function leaderboard(s: MarketServices): MarketHandler {
  return async (ctx, raw, { user, scope }) => {
    const out = wantsCsv(ctx);
    const { params, window, problems } = parseRequest(raw, validators.any, s.deps.now(), await s.deps.rolledUp.market(), { wholeWindow: true });
    const assets = assetsOf(params, scope.assets, problems, {
      max: user.is_staff ? Infinity : MAX_ASSETS,
      byDefault: user.is_staff ? scope.assets : scope.assets.slice(0, MAX_ASSETS),
    });
    const levels = levelsOf(params);
    const exchanges = params.exchanges;
    for (const e of exchanges ?? []) if (!scope.exchanges.has(e)) problems.add('exchanges', `"${e}" is not a known exchange.`);
    const marketType = params.market_type ?? 'all';
    const page = params.page ?? 1;
    const sort = sortKey(params.sort_by ?? 'volume', problems);
    const direction = params.sort_direction ?? 'desc';
    if (problems.any()) throw badRequest(problems.fields());

    const pairs = pairsOf(scope, assets).filter((x) => (!exchanges || exchanges.includes(x.exchange)) && (marketType === 'all' || x.market_type === marketType));
    const partials = await s.windowPartials.window({ pairs, interval: 'a', zone: window.zone, pieces: window.plan.pieces });
    const columns = ['asset', 'exchange', 'pair', 'price_change', 'volume', 'usd_open_interest', 'funding_rate_8h', 'tick_bps', 'tick_bps_status', 'tick_bps_samples', ...depthColumnNames(levels, ['bid', 'ask'])];
    const blank = blankRow(columns);
    const writeDepth = depthColumnsWriter(levels, ['bid', 'ask']);
    // Sorting needs the level it sorts by, whatever `bps` returns.
    const sortColumn = sort && 'side' in sort ? `${sort.side}_${levelName(sort.level)}bps` : undefined;
    const writeSortDepth = sort && 'side' in sort ? depthColumnsWriter([sort.level], [sort.side]) : undefined;
    const all: { row: Row; sortValue: number | null }[] = [];
    for (const { pair, book: b, trade: t, derivative } of pairsWithData(pairs, partials)) {
      const row = blank();
      row.asset = pair.asset;
      row.exchange = pair.exchange;
      row.pair = pair.pair;
      row.price_change = priceChange(b);
      row.volume = volume(t);
      Object.assign(row, derivatives(derivative), tick(b));
      writeDepth(b, row);
      let sortValue: unknown;
      if (writeSortDepth) {
        const sortRow: Row = {};
        writeSortDepth(b, sortRow);
        sortValue = sortRow[sortColumn!];
      } else sortValue = row[(sort as { column: string }).column];
      all.push({ row, sortValue: (sortValue as number | null | undefined) ?? null });
    }
    all.sort((x, y) => {
      // Rows without a value go last in either direction.
      if (x.sortValue === null || y.sortValue === null) return x.sortValue === null ? (y.sortValue === null ? 0 : 1) : -1;
      const d = x.sortValue - y.sortValue;
      return direction === 'asc' ? d : -d;
    });
    sendRows(ctx, all.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((x) => x.row), columns, out);
  };
}
