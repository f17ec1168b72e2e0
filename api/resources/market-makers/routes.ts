// The market-maker endpoints (specification 4.10-4.12, and the reconciliation beyond it):
// GET, parameters in the query string, `type=csv` and `filename` as the market endpoints.
// One handler per endpoint, beside this file.
import type { Context } from 'koa';
import { PartialsRepository } from '../../../domain/market/repositories/partials.ts';
import { MarketMakerMetrics } from '../../../domain/market-makers/metrics.ts';
import type { ApiDeps } from '../../deps.ts';
import type { Handlers } from '../../http/contract.ts';
import type { RawParams } from '../market/schemas.ts';
import { reconciliation } from './reconciliation.ts';
import { reportedVolume } from './reported-volume.ts';
import { sealedRowsOf, type SealedRowsCache } from './sealed-rows.ts';
import { summary } from './summary.ts';
import { trustedDepth } from './trusted-depth.ts';
import type { Sources } from './values.ts';

export interface MmServices extends Sources {
  deps: ApiDeps;
  /** The summary's text of sealed buckets, kept between requests. */
  sealed: SealedRowsCache;
}

export type MmHandler = (s: MmServices) => (ctx: Context, raw: RawParams) => Promise<void>;

export function marketMakerHandlers(deps: ApiDeps): Handlers {
  const s: MmServices = { deps, metrics: new MarketMakerMetrics(deps.ch), partials: new PartialsRepository(deps.ch), sealed: sealedRowsOf(deps) };
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
