// A target as posted (preview `targets[]`, batch `create_targets[]`; specification 2.4 and
// 4.8) checked against what the caller manages, into a definition. The type follows the organization (a
// market maker's targets are `mm`, others `gb`: addendum section 6); the caller must
// manage such targets (domain/targets/visibility.ts), and an organization or asset the
// caller may not use reads like an unknown one.
import { isTargetMetric, defaultDirection, type TargetSession, type TargetType } from '../../../domain/targets/facts.ts';
import type { TargetDefinition } from '../../../domain/targets/repository.ts';
import type { TargetAccess } from '../../../domain/targets/visibility.ts';
import type { Organization, ReferenceLists } from '../../../domain/reference/repository.ts';
import { scopeOf } from '../../../domain/reference/visibility.ts';
import type { BodyOf } from '../../http/contract.ts';
import { forbidden, MESSAGES, type FieldErrors } from '../../http/errors.ts';

export const TARGET_MESSAGES = {
  organization: (slug: string) => `"${slug}" is not an organization whose targets you manage.`,
  notManager: 'Only members of a project organization may set targets.',
  type: (type: TargetType) => `Must be "${type}" for this organization (a market maker's targets are mm, others gb).`,
  asset: (symbol: string) => `"${symbol}" is not an asset of the organization whose targets you manage.`,
  pair: (pair: string, exchange: string) => `"${pair}" on "${exchange}" is not a pair of the asset the organization covers.`,
  metric: (metric: string, type: TargetType) => `"${metric}" is not a metric identifier of ${type} targets.`,
  referencePrice: 'A reference price above 0 is required when price scaling is enabled.',
} as const;

/** What checking targets needs, read once per request. */
export interface TargetContext {
  access: TargetAccess;
  organizations: Map<string, Organization>;
  lists: ReferenceLists;
}

/** A target as posted; its fields' types, choices and bounds were checked by the contract (api/openapi.yaml, `TargetInput`). */
export type TargetInput = NonNullable<BodyOf<'applyTargetBatch'>['create_targets']>[number];

/**
 * The definition, or the item's field errors, against what the caller manages. Unset
 * optional fields take their defaults. An organization whose targets the caller does not
 * manage (or an unknown one, alike) is a refusal of the whole request: 403.
 */
export function targetDefinitionOf(x: TargetInput, c: TargetContext): { target: TargetDefinition; errors?: undefined } | { errors: FieldErrors; target?: undefined } {
  const errors: FieldErrors = {};
  const fail = (f: string, m: string) => {
    errors[f] = [m];
  };
  const org = c.organizations.get(x.organization);
  const type: TargetType = org?.kind === 'market_maker' ? 'mm' : 'gb';
  const scope = org ? scopeOf(org, c.lists) : undefined;
  const manageable = org && scope ? scope.assets.filter((a) => c.access.canManage({ type, organization: org.slug, asset: a.symbol })) : [];
  if (manageable.length === 0) throw forbidden(TARGET_MESSAGES.organization(x.organization));
  if (x.type !== undefined && x.type !== type) fail('type', TARGET_MESSAGES.type(type));
  if (!manageable.some((a) => a.symbol === x.asset)) fail('asset', TARGET_MESSAGES.asset(x.asset));
  else if (!scope!.pairs.some((p) => p.exchange === x.exchange && p.pair === x.pair && p.asset === x.asset)) fail('pair', TARGET_MESSAGES.pair(x.pair, x.exchange));
  if (!isTargetMetric(type, x.metric)) fail('metric', TARGET_MESSAGES.metric(x.metric, type));
  if (x.threshold === undefined) fail('threshold', MESSAGES.required);
  const scalingEnabled = x.scaling_enabled ?? false;
  const scalingMode = x.scaling_mode ?? 'price';
  const scalingSource = x.scaling_source ?? 'manual';
  const reference = x.scaling_reference_price ?? 0;
  if (scalingEnabled && scalingMode === 'price' && scalingSource !== 'loan_twap' && !(reference > 0)) fail('scaling_reference_price', TARGET_MESSAGES.referencePrice);
  if (Object.keys(errors).length > 0) return { errors };
  const hours = x.market_hours === 'default' || x.market_hours === '' || x.market_hours === undefined ? null : (x.market_hours as TargetSession | null);
  return {
    target: {
      type,
      organization: x.organization,
      asset: x.asset,
      exchange: x.exchange,
      pair: x.pair,
      metric: x.metric,
      threshold: x.threshold!,
      direction: x.direction ?? defaultDirection(x.metric),
      active: x.active ?? true,
      telegram_notifications: x.telegram_notifications ?? false,
      scaling_mode: scalingMode,
      scaling_enabled: scalingEnabled,
      scaling_source: scalingSource,
      scaling_reference_price: reference,
      market_hours: hours,
    },
  };
}

/** The key a target is matched by (addendum section 6): one target per key. */
export const targetKey = (t: Pick<TargetDefinition, 'type' | 'organization' | 'asset' | 'exchange' | 'pair' | 'metric' | 'market_hours'>): string =>
  [t.type, t.organization, t.asset, t.exchange, t.pair, t.metric, t.market_hours ?? ''].join('\u0000');
