// The market endpoints (specification 4.5-4.7, 4.13, 4.14), each as GET with its
// parameters in the query string and POST with them in a JSON body; `type=csv` and
// `filename` come from the query string on both. One handler per endpoint, beside this file.
import type { Context } from 'koa';
import { PartialsRepository } from '../../../domain/market/repositories/partials.ts';
import { UptimeRepository } from '../../../domain/market/repositories/uptime.ts';
import { WriteCounts } from '../../../domain/market/repositories/write-counts.ts';
import { MAX_REUSE_MS, RecentAnswers } from '../../market-caches/recent-answers.ts';
import { UptimeRows } from '../../market-caches/uptime-rows.ts';
import { BLOCK_MAX_PAIRS, WindowPartials } from '../../market-caches/window-partials.ts';
import type { ApiDeps } from '../../deps.ts';
import type { Handlers, OperationId } from '../../http/contract.ts';
import { leaderboard } from './leaderboard.ts';
import { regionalVolume } from './regional-volume.ts';
import type { RawParams } from './schemas.ts';
import { CallerScopes, type MarketHandler, type MarketServices } from './services.ts';
import { sharedAnswers } from './shared-answers.ts';
import { summary } from './summary.ts';
import { uptime } from './uptime.ts';

export function marketHandlers(deps: ApiDeps): Handlers {
  const partials = new PartialsRepository(deps.ch);
  const uptimeRepo = new UptimeRepository(deps.ch);
  const writeCounts = new WriteCounts(deps.ch);
  const sealing = { latenessMs: deps.config.latenessMs, now: deps.now };
  const s: MarketServices = {
    deps,
    partials,
    uptime: uptimeRepo,
    windowPartials: new WindowPartials(partials, writeCounts, deps.windowCache, sealing, deps.config.windowBlockMaxPairs ?? BLOCK_MAX_PAIRS),
    uptimeRows: new UptimeRows(uptimeRepo, writeCounts, deps.uptimeCache, sealing),
    scopes: new CallerScopes(deps),
  };
  const answers = deps.marketAnswers ?? new RecentAnswers({ reuseMs: deps.config.answerReuseMs ?? MAX_REUSE_MS, now: deps.now });
  const handlers: Handlers = {};
  const endpoints: [string, string, MarketHandler][] = [
    ['/v2/metrics/summary/', 'MarketSummary', summary(s)],
    ['/v2/leaderboard/', 'Leaderboard', leaderboard(s)],
    ['/v2/metrics/uptime/spread/', 'SpreadUptime', uptime(s, 'spread')],
    ['/v2/metrics/uptime/depth/', 'DepthUptime', uptime(s, 'depth')],
    ['/v2/metrics/volume/regional/', 'RegionalVolume', regionalVolume(s)],
  ];
  for (const [path, name, endpoint] of endpoints) {
    const handler = sharedAnswers(s, answers, path, endpoint);
    handlers[`get${name}` as OperationId] = (ctx: Context) => handler(ctx, { ...ctx.query });
    // The contract has checked the body: a JSON object of the endpoint's parameters.
    handlers[`post${name}` as OperationId] = (ctx: Context) => handler(ctx, { ...((ctx.request.body as RawParams | undefined) ?? {}) });
  }
  return handlers;
}
