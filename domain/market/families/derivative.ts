// Perpetuals' funding rate and open interest (addendum section 4): the latest values, as
// (event time, value) tuples whose maximum is the latest; epoch 0 when none came.
import type { Family, PartialKey, TimeValue } from './family.ts';

export const derivative: Family = {
  name: 'derivative',
  tables: { minutes: 'derivative_minutes', hours: 'derivative_hours', days: 'derivative_days', open: 'derivative_open_hours' },
  params: {},
  aggregates: [
    { name: 'funding', type: "Tuple(DateTime64(3, 'UTC'), Float64)", minute: 'max(funding)', combine: 'max', partial: 'time-value' },
    { name: 'open_interest', type: "Tuple(DateTime64(3, 'UTC'), Float64)", minute: 'max(open_interest)', combine: 'max', partial: 'time-value' },
  ],
};

export interface DerivativePartial extends PartialKey {
  funding: TimeValue;
  open_interest: TimeValue;
}
