// POST/GET /v2/metrics/uptime/spread/ and /v2/metrics/uptime/depth/ (specification 4.13,
// 4.14): the share of minutes with the spread within each level, or with both sides above
// each amount within each level, per pair and bucket.
import { spanOf } from '../../../domain/market/window.ts';
import { UPTIME_AMOUNTS_USD } from '../../../domain/market/facts.ts';
import { rolledUpAmounts, type UptimeKind, type UptimeQuery } from '../../../domain/market/repositories/uptime.ts';
import { badRequest } from '../../http/errors.ts';
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { amountsOf, assetsOf, levelsOf, parseRequest } from './params.ts';
import { validators } from './schemas.ts';
import { pairsOf, type MarketHandler, type MarketServices } from './services.ts';

/** Amounts the rollups do not count are read from minute rows: within this span. */
const MINUTES_ONLY_SPAN_MS = 31 * 86_400_000;

export function uptime(s: MarketServices, kind: UptimeKind): MarketHandler {
  return async (ctx, raw, { scope }) => {
    const out = wantsCsv(ctx);
    const { params, window, problems } = parseRequest(raw, validators.any, s.deps.now(), await s.deps.rolledUp.market());
    const assets = assetsOf(params, scope.assets, problems);
    const levels = levelsOf(params);
    const amounts = kind === 'depth' ? amountsOf(params) : undefined;
    if (problems.any()) throw badRequest(problems.fields());
    if (amounts && !rolledUpAmounts(amounts) && spanOf(window) > MINUTES_ONLY_SPAN_MS) {
      throw badRequest({ amounts: [`Amounts other than ${UPTIME_AMOUNTS_USD.join(', ')} are computed from minute data: the window may span at most 31 days.`] });
    }
    const q: UptimeQuery = { kind, pairs: pairsOf(scope, assets), window, levels, ...(amounts ? { amounts } : {}) };
    // JSON as ClickHouse writes it (sealed buckets kept between requests); CSV through csv-stringify.
    if (out.csv) {
      const { rows, columns } = await s.uptime.rows(q);
      sendRows(ctx, rows, columns, out);
      return;
    }
    ctx.type = 'application/json';
    ctx.body = await s.uptimeRows.json(q);
  };
}
