// What an organization starts from when it sets targets (specification 4.8's prefill,
// docs/targets.md): each metric's default threshold and direction, and a new target's
// other fields. The preview offers these, fills a posted target's missing threshold with
// them, and the demo seeds its targets from them.
import { defaultDirection } from './facts.ts';
import type { TargetDefinition } from './repository.ts';

/** The threshold an organization starts from, per metric family. */
export function defaultThreshold(metric: string): number {
  const family = metric.split('/')[0];
  if (metric.startsWith('uptime/')) return 95;
  if (metric.startsWith('coverage/')) return 20;
  switch (family) {
    case 'volume':
      return metric === 'volume/volume' ? 100_000 : 0;
    case 'spread':
      return metric.endsWith('spread_bps') ? 50 : 0;
    case 'depth':
      return metric.includes('n_') ? 5 : 10_000;
    case 'slippage':
      return 50;
    default:
      return 0;
  }
}

/** A new target of a market and metric: the metric's default threshold and direction, active, all hours, price scaling not enabled. */
export function defaultTarget(of: Pick<TargetDefinition, 'type' | 'organization' | 'asset' | 'exchange' | 'pair' | 'metric'>): TargetDefinition {
  return {
    ...of,
    threshold: defaultThreshold(of.metric),
    direction: defaultDirection(of.metric),
    active: true,
    telegram_notifications: false,
    scaling_mode: 'price',
    scaling_enabled: false,
    scaling_source: 'manual',
    scaling_reference_price: 0,
    market_hours: null,
  };
}
