// A target as the list shows it (specification 2.4).
import type { Organization } from '../../../domain/reference/repository.ts';
import type { Target } from '../../../domain/targets/repository.ts';
import { presentOrganization } from '../../presenters.ts';

const iso = (ms: number) => new Date(ms).toISOString();

export function presentTarget(t: Target, organizations: ReadonlyMap<string, Organization>) {
  return {
    id: t.id,
    type: t.type,
    organization: presentOrganization(organizations.get(t.organization) ?? { slug: t.organization, name: t.organization }),
    asset: t.asset,
    exchange: t.exchange,
    pair: t.pair,
    metric: t.metric,
    threshold: t.threshold,
    scaling_mode: t.scaling_mode,
    scaling_enabled: t.scaling_enabled,
    effective_threshold: t.effective_threshold,
    direction: t.direction,
    active: t.active,
    telegram_notifications: t.telegram_notifications,
    updates: t.updates.map((u) => ({ status: u.status, updated_at: iso(u.updated_at) })),
    scaling_source: t.scaling_source,
    scaling_reference_price: t.scaling_reference_price,
    current_price: t.current_price,
    scaling_factor: t.scaling_factor,
    market_hours: t.market_hours,
    status: t.status,
  };
}

/** When its status last changed (or it was made), epoch ms. */
export const lastChange = (t: Target): number => t.updates[t.updates.length - 1]?.updated_at ?? t.created_at;
