// POST/GET /v2/metrics/summary/ (specification 4.6): one row per pair over the window
// (interval `a` only): volume, TWAP, VWAP, derivatives, tick and depth at the levels asked.
import { badRequest } from '../../http/errors.ts';
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { presentExchange } from '../../presenters.ts';
import { assetsOf, levelsOf, parseRequest } from './params.ts';
import { derivatives, tick, twap, volume, vwap } from '../../../domain/market/values.ts';
import { blankRow, depthColumnNames, depthColumnsWriter, type Row } from './rows.ts';
import { validators } from './schemas.ts';
import { pairsOf, pairsWithData, type MarketHandler, type MarketServices } from './services.ts';

export function summary(s: MarketServices): MarketHandler {
  return async (ctx, raw, { scope }) => {
    const out = wantsCsv(ctx);
    const { params, window, problems } = parseRequest(raw, validators.wholeWindow, s.deps.now(), await s.deps.rolledUp.market());
    const assets = assetsOf(params, scope.assets, problems);
    const levels = levelsOf(params);
    if (problems.any()) throw badRequest(problems.fields());

    const pairs = pairsOf(scope, assets);
    const partials = await s.windowPartials.window({ pairs, interval: window.interval, zone: window.zone, pieces: window.plan.pieces });
    const depth = ['bid', 'n_bid', 'ask', 'n_ask'] as const;
    const columns = ['asset', 'exchange', 'pair', 'volume', 'twap', 'vwap', 'funding_rate_8h', 'usd_open_interest', 'tick_bps', 'tick_bps_status', 'tick_bps_samples', ...depthColumnNames(levels, [...depth])];
    const blank = blankRow(columns);
    const writeDepth = depthColumnsWriter(levels, [...depth]);
    const rows: Row[] = [];
    for (const { pair, book: b, trade: t, derivative } of pairsWithData(pairs, partials)) {
      const row = blank();
      row.asset = pair.asset;
      row.exchange = presentExchange(scope.exchanges.get(pair.exchange) ?? { slug: pair.exchange, name: pair.exchange, icon_url: '', region: '' });
      row.pair = pair.pair;
      row.volume = volume(t);
      row.twap = twap(b);
      row.vwap = vwap(t);
      Object.assign(row, derivatives(derivative), tick(b));
      writeDepth(b, row);
      rows.push(row);
    }
    sendRows(ctx, rows, columns, out);
  };
}
