// A target as posted (preview `targets[]`, batch `create_targets[]`; specification 2.4 and
// 4.8) checked field by field into a definition. The type follows the organization (a
// market maker's targets are `mm`, others `gb`: addendum section 6); the caller must
// manage such targets (domain/targets/visibility.ts), and an organization or asset the
// caller may not use reads like an unknown one.
import { isTargetMetric, defaultDirection, DIRECTIONS, SCALING_MODES, SCALING_SOURCES, TARGET_SESSIONS, type TargetSession, type TargetType } from '../../../domain/targets/facts.ts';
import type { TargetDefinition } from '../../../domain/targets/repository.ts';
import type { TargetAccess } from '../../../domain/targets/visibility.ts';
import type { Organization, ReferenceLists } from '../../../domain/reference/repository.ts';
import { scopeOf } from '../../../domain/reference/visibility.ts';
import { MESSAGES, type FieldErrors } from '../../http/errors.ts';

export const TARGET_MESSAGES = {
  organization: (slug: string) => `"${slug}" is not an organization whose targets you manage.`,
  type: (type: TargetType) => `Must be "${type}" for this organization (a market maker's targets are mm, others gb).`,
  asset: (symbol: string) => `"${symbol}" is not an asset of the organization whose targets you manage.`,
  pair: (pair: string, exchange: string) => `"${pair}" on "${exchange}" is not a pair of the asset the organization covers.`,
  metric: (metric: string, type: TargetType) => `"${metric}" is not a metric identifier of ${type} targets.`,
  choice: (values: readonly string[]) => `Not a valid choice; expected one of: ${values.join(', ')}.`,
  referencePrice: 'A reference price above 0 is required when price scaling is enabled.',
} as const;

/** What checking targets needs, read once per request. */
export interface TargetContext {
  access: TargetAccess;
  organizations: Map<string, Organization>;
  lists: ReferenceLists;
}

type Raw = Record<string, unknown>;

/** A form field arrives as a string: "true"/"false", a number's text. */
function bool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === '1' || v === 'on') return true;
  if (v === 'false' || v === '0' || v === 'off' || v === '') return false;
  return undefined;
}

function num(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** The definition, or the item's field errors. Unset optional fields take their defaults. */
export function checkTarget(raw: unknown, c: TargetContext): { target: TargetDefinition; errors?: undefined } | { errors: FieldErrors; target?: undefined } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { errors: { non_field_errors: ['Expected an object.'] } };
  const x = raw as Raw;
  const errors: FieldErrors = {};
  const fail = (f: string, m: string) => {
    errors[f] = [m];
  };
  const str = (f: string): string | undefined => {
    const v = x[f];
    if (v === undefined || v === null || v === '') fail(f, MESSAGES.required);
    else if (typeof v !== 'string') fail(f, 'Not a valid string.');
    else return v;
    return undefined;
  };
  const organization = str('organization');
  const asset = str('asset');
  const exchange = str('exchange');
  const pair = str('pair');
  const metric = str('metric');

  const org = organization === undefined ? undefined : c.organizations.get(organization);
  const type: TargetType | undefined = org ? (org.kind === 'market_maker' ? 'mm' : 'gb') : undefined;
  if (organization !== undefined && !org) fail('organization', TARGET_MESSAGES.organization(organization));
  if (type && x.type !== undefined && x.type !== type) fail('type', TARGET_MESSAGES.type(type));

  if (org && type && asset !== undefined) {
    const scope = scopeOf(org, c.lists);
    const manageable = scope.assets.filter((a) => c.access.canManage({ type, organization: org.slug, asset: a.symbol }));
    // An organization none of whose targets the caller manages reads as an unknown one.
    if (manageable.length === 0) fail('organization', TARGET_MESSAGES.organization(org.slug));
    else if (!manageable.some((a) => a.symbol === asset)) fail('asset', TARGET_MESSAGES.asset(asset));
    else if (exchange !== undefined && pair !== undefined && !scope.pairs.some((p) => p.exchange === exchange && p.pair === pair && p.asset === asset)) {
      fail('pair', TARGET_MESSAGES.pair(pair, exchange));
    }
  }
  if (type && metric !== undefined && !isTargetMetric(type, metric)) fail('metric', TARGET_MESSAGES.metric(metric, type));

  const threshold = num(x.threshold);
  if (x.threshold === undefined || x.threshold === null || x.threshold === '') fail('threshold', MESSAGES.required);
  else if (threshold === undefined) fail('threshold', 'A valid number is required.');

  const choice = <T extends string>(f: string, values: readonly T[], fallback: T): T => {
    const v = x[f];
    if (v === undefined || v === null || v === '') return fallback;
    if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
    fail(f, TARGET_MESSAGES.choice(values));
    return fallback;
  };
  const flag = (f: string, fallback: boolean): boolean => {
    if (x[f] === undefined || x[f] === null) return fallback;
    const b = bool(x[f]);
    if (b === undefined) fail(f, 'Must be a valid boolean.');
    return b ?? fallback;
  };
  const direction = choice('direction', DIRECTIONS, defaultDirection(metric ?? ''));
  const hours = x.market_hours === 'default' ? null : choice<TargetSession | ''>('market_hours', ['', ...TARGET_SESSIONS], '');
  const scalingEnabled = flag('scaling_enabled', false);
  const scalingMode = choice('scaling_mode', SCALING_MODES, 'price');
  const scalingSource = choice('scaling_source', SCALING_SOURCES, 'manual');
  let reference = 0;
  if (x.scaling_reference_price !== undefined && x.scaling_reference_price !== null && x.scaling_reference_price !== '') {
    const r = num(x.scaling_reference_price);
    if (r === undefined || r < 0) fail('scaling_reference_price', 'A valid number >= 0 is required.');
    else reference = r;
  }
  if (scalingEnabled && scalingMode === 'price' && scalingSource !== 'loan_twap' && !(reference > 0) && !errors.scaling_reference_price) {
    fail('scaling_reference_price', TARGET_MESSAGES.referencePrice);
  }
  const telegram = flag('telegram_notifications', false);
  const active = flag('active', true);
  if (Object.keys(errors).length > 0) return { errors };
  return {
    target: {
      type: type!,
      organization: organization!,
      asset: asset!,
      exchange: exchange!,
      pair: pair!,
      metric: metric!,
      threshold: threshold!,
      direction,
      active,
      telegram_notifications: telegram,
      scaling_mode: scalingMode,
      scaling_enabled: scalingEnabled,
      scaling_source: scalingSource,
      scaling_reference_price: reference,
      market_hours: hours === '' ? null : hours,
    },
  };
}

/** The key a target is matched by (addendum section 6): one target per key. */
export const targetKey = (t: Pick<TargetDefinition, 'type' | 'organization' | 'asset' | 'exchange' | 'pair' | 'metric' | 'market_hours'>): string =>
  [t.type, t.organization, t.asset, t.exchange, t.pair, t.metric, t.market_hours ?? ''].join('\u0000');
