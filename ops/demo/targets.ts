// The demo's targets, made once (when the demo's organizations have none): thresholds the
// synthetic market meets, misses, or crosses as the evaluator's hour fills, so the list
// shows every status within minutes of a first start (README).
import type { ApiDeps } from '../../api/deps.ts';
import { defaultTarget } from '../../domain/targets/defaults.ts';
import { TargetRepository, type TargetDefinition } from '../../domain/targets/repository.ts';

type Demo = Pick<TargetDefinition, 'organization' | 'asset' | 'exchange' | 'pair' | 'metric' | 'threshold'> & Partial<TargetDefinition>;

const DEMO_TARGETS: Demo[] = [
  // Always met: stable from the first evaluation.
  { organization: 'acme', asset: 'ACME', exchange: 'binance', pair: 'ACME/USDT', metric: 'spread/spread_bps', threshold: 500 },
  // Never met: alert, with a Telegram message when a bot token is configured.
  { organization: 'acme', asset: 'ACME', exchange: 'binance', pair: 'ACME/USDT', metric: 'depth/bid_1bps', threshold: 1e12, telegram_notifications: true },
  // About two and a half minutes of the feed's trading: missed while the trailing hour holds
  // less (alert), then met (recovering, twice), then stable.
  { organization: 'acme', asset: 'ACME', exchange: 'okx', pair: 'ACME/USDT', metric: 'volume/volume', threshold: 600_000, telegram_notifications: true },
  // Weekend hours only: unchecked on weekdays.
  { organization: 'acme', asset: 'ACME', exchange: 'binance', pair: 'ACME/USDT', metric: 'uptime/spread/10bps', threshold: 90, market_hours: 'weekend-hours' },
  // A market maker's trusted depth, set by the project that owns the asset.
  { organization: 'mm-one', asset: 'ACME', exchange: 'binance', pair: 'ACME/USDT', metric: 'depth/bid_10bps', threshold: 1_000 },
  // A market maker's own spread is not measured yet: unchecked.
  { organization: 'mm-two', asset: 'ACME_PERP', exchange: 'binance', pair: 'ACME_PERP/USDT', metric: 'spread/spread_bps', threshold: 20 },
];

export async function seedDemoTargets(deps: Pick<ApiDeps, 'ch' | 'ids' | 'now'>): Promise<number> {
  const targets = new TargetRepository(deps.ch);
  const existing = await targets.all();
  if (existing.some((t) => t.organization === 'acme' || t.organization === 'mm-one')) return 0;
  const floor = await targets.maxId();
  const create: (TargetDefinition & { id: number })[] = [];
  for (const d of DEMO_TARGETS) {
    create.push({
      ...defaultTarget({ type: d.organization.startsWith('mm-') ? 'mm' : 'gb', organization: d.organization, asset: d.asset, exchange: d.exchange, pair: d.pair, metric: d.metric }),
      ...d,
      id: await deps.ids.next('targets', floor),
    });
  }
  await targets.applyBatch({ deleteIds: [], create, by: 0, at: deps.now() });
  return create.length;
}
