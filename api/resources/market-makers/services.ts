// What the market-maker handlers share: the service's dependencies, the readings of the
// domain (domain/market-makers/readings.ts) and what is kept of sealed buckets.
import type { Context } from 'koa';
import type { MarketMakerReadings } from '../../../domain/market-makers/readings.ts';
import type { ApiDeps } from '../../deps.ts';
import type { RawParams } from '../market/schemas.ts';
import type { MarketMakerCaches } from './sealed-rows.ts';

export interface MmServices {
  deps: ApiDeps;
  readings: MarketMakerReadings;
  /** What the endpoints keep of sealed buckets between requests (the API's, deps.marketMakerCaches). */
  caches: MarketMakerCaches;
}

export type MmHandler = (s: MmServices) => (ctx: Context, raw: RawParams) => Promise<void>;
