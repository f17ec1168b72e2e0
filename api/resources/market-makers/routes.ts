// The market-maker endpoints (specification 4.10-4.12, and the reconciliation beyond it):
// GET, parameters in the query string, `type=csv` and `filename` as the market endpoints.
// One handler per endpoint, beside this file.
import type { Context } from 'koa';
import { MarketMakerReadings } from '../../../domain/market-makers/readings.ts';
import type { ApiDeps } from '../../deps.ts';
import type { Handlers } from '../../http/contract.ts';
import { reconciliation } from './reconciliation.ts';
import { reportedVolume } from './reported-volume.ts';
import type { MmHandler, MmServices } from './services.ts';
import { summary } from './summary.ts';
import { trustedDepth } from './trusted-depth.ts';

export function marketMakerHandlers(deps: ApiDeps): Handlers {
  const s: MmServices = { deps, readings: new MarketMakerReadings(deps.ch), caches: deps.marketMakerCaches };
  const get = (handler: MmHandler) => {
    const handle = handler(s);
    return (ctx: Context) => handle(ctx, { ...ctx.query });
  };
  return {
    getMarketMakerSummary: get(summary),
    getTrustedDepth: get(trustedDepth),
    getReportedVolume: get(reportedVolume),
    getReconciliation: get(reconciliation),
  };
}
