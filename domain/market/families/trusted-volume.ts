// Trusted volume (addendum section 4): the USD sum of a market maker's own fills per
// wallet, each fill id once (null when no fill had a USD rate).
import type { Family, PartialKey } from './family.ts';

export const trustedVolume: Family = {
  name: 'trusted_volume',
  tables: { minutes: 'trusted_volume_minutes', hours: 'trusted_volume_hours', days: 'trusted_volume_days' },
  keys: ['wallet_id'],
  params: {},
  aggregates: [
    { name: 'fills', type: 'UInt64', minute: 'sum(fills)', combine: 'sum', partial: 'value' },
    { name: 'volume_usd', type: 'Float64', minute: 'sum(volume_usd)', combine: 'sum', partial: 'value' },
    { name: 'usd_fills', type: 'UInt64', minute: 'sum(usd_fills)', combine: 'sum', partial: 'value' },
  ],
};

export interface TrustedVolumePartial extends PartialKey {
  wallet_id: number;
  fills: number;
  volume_usd: number;
  usd_fills: number;
}
