// The market-maker endpoints (specification 4.10-4.12, and the reconciliation beyond it):
// GET, parameters in the query string, `type=csv` and `filename` as the market endpoints.
// One handler per endpoint, beside this file.
import type { Context } from 'koa';
import { MarketMakerReadings } from '../../../domain/market-makers/readings.ts';
import type { ApiDeps } from '../../deps.ts';
import type { Handlers } from '../../http/contract.ts';
import type { RawParams } from '../market/schemas.ts';
import { reconciliation } from './reconciliation.ts';
import { reportedVolume } from './reported-volume.ts';
import type { MarketMakerCaches } from './sealed-rows.ts';
import { summary } from './summary.ts';
import { trustedDepth } from './trusted-depth.ts';

export interface MmServices {
  deps: ApiDeps;
  readings: MarketMakerReadings;
  /** What the endpoints keep of sealed buckets between requests (the API's, deps.marketMakerCaches). */
  caches: MarketMakerCaches;
}

export type MmHandler = (s: MmServices) => (ctx: Context, raw: RawParams) => Promise<void>;

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
