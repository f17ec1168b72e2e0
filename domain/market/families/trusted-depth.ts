// Trusted depth (addendum section 4): a market maker's own open orders per wallet, valued
// at every level of L against the public mid of the same minute
// (domain/market-makers/trusted-depth.ts joins the two). Means over minutes with data, as
// the market's depth.
import type { Family, PartialKey } from './family.ts';

export const trustedDepth: Family = {
  name: 'trusted_depth',
  tables: { minutes: 'trusted_depth_minutes', hours: 'trusted_depth_hours', days: 'trusted_depth_days' },
  keys: ['wallet_id'],
  params: {},
  aggregates: [
    { name: 'minutes', type: 'UInt64', minute: 'count()', combine: 'sum', partial: 'value' },
    { name: 'bid_depth_sum', type: 'Array(Float64)', minute: 'sumForEach(bid_depth)', combine: 'sumEach', partial: 'value' },
    { name: 'ask_depth_sum', type: 'Array(Float64)', minute: 'sumForEach(ask_depth)', combine: 'sumEach', partial: 'value' },
  ],
};

export interface TrustedDepthPartial extends PartialKey {
  wallet_id: number;
  minutes: number;
  bid_depth_sum: number[];
  ask_depth_sum: number[];
}
