// Trade metrics (addendum section 4): volume in USD (null when a trade had no USD rate),
// and the amount and notional the VWAP divides.
import type { Family, PartialKey } from './family.ts';

export const trade: Family = {
  name: 'trade',
  tables: { minutes: 'trade_minutes', hours: 'trade_hours', days: 'trade_days', open: 'trade_open_hours' },
  params: {},
  aggregates: [
    { name: 'trades', type: 'UInt64', minute: 'sum(trades)', combine: 'sum', partial: 'value' },
    { name: 'amount', type: 'Float64', minute: 'sum(amount)', combine: 'sum', partial: 'value' },
    { name: 'notional', type: 'Float64', minute: 'sum(notional)', combine: 'sum', partial: 'value' },
    { name: 'volume_usd', type: 'Float64', minute: 'sum(volume_usd)', combine: 'sum', partial: 'value' },
    { name: 'usd_trades', type: 'UInt64', minute: 'sum(usd_trades)', combine: 'sum', partial: 'value' },
  ],
};

export interface TradePartial extends PartialKey {
  trades: number;
  amount: number;
  notional: number;
  volume_usd: number;
  /** Trades with a USD rate: none means volume is unknown. */
  usd_trades: number;
}
