// The fixed sets of targets (specification 2.4 and 4.9, addendum section 6).
import { DEFAULT_SESSION_ZONE, GB_METRICS, MM_METRICS, sessionHours, type Session } from '../market/facts.ts';

/** Who manages targets: staff, the caller's projects, the assets they own. */
export interface TargetManager {
  staff: boolean;
  projects: ReadonlySet<string>;
  owned: ReadonlySet<string>;
}

/** Whether the caller changes a target (docs/targets.md): a project's `gb` targets, the `mm` targets on the assets it owns; staff all. */
export const managesTarget = (who: TargetManager, t: { type: string; organization: string; asset: string }): boolean =>
  who.staff || (t.type === 'gb' ? who.projects.has(t.organization) : who.owned.has(t.asset));

/** Whether the caller sets targets at all: staff, or a member of a project that owns an asset (a market maker's members set none). */
export const mayManageTargets = (who: Pick<TargetManager, 'staff' | 'owned'>): boolean => who.staff || who.owned.size > 0;

export const TARGET_TYPES = ['gb', 'mm'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

export const DIRECTIONS = ['above', 'below'] as const;
export type Direction = (typeof DIRECTIONS)[number];

export const STATUSES = ['unchecked', 'stable', 'alert', 'recovering'] as const;
export type TargetStatus = (typeof STATUSES)[number];

/** A target's session; all hours is null (`default` in the list's filter). */
export const TARGET_SESSIONS = ['market-hours', 'pre-market', 'after-hours', 'overnight', 'weekend-hours'] as const;
export type TargetSession = (typeof TARGET_SESSIONS)[number];

/** The market session a target's `market_hours` names (`overnight` is the blue-ocean session). */
export const SESSION_OF: Readonly<Record<TargetSession, Session>> = {
  'market-hours': 'market-hours',
  'pre-market': 'pre-market',
  'after-hours': 'after-hours',
  overnight: 'blue-ocean',
  'weekend-hours': 'weekend-hours',
};

/** The sessions a target may be limited to, as they are evaluated, for people to read (the preview's `prefill.market_hours`, the app's choices). */
export function targetSessionHours() {
  return {
    timezone: DEFAULT_SESSION_ZONE,
    sessions: Object.fromEntries(TARGET_SESSIONS.map((s) => [s, sessionHours(SESSION_OF[s])])) as Record<TargetSession, ReturnType<typeof sessionHours>>,
    default: 'all hours: market_hours null',
  };
}

export const SCALING_MODES = ['legacy', 'price'] as const;
export type ScalingMode = (typeof SCALING_MODES)[number];

export const SCALING_SOURCES = ['asset_twap_24h', 'loan_twap', 'manual'] as const;
export type ScalingSource = (typeof SCALING_SOURCES)[number];

const METRICS: Record<TargetType, ReadonlySet<string>> = { gb: new Set(GB_METRICS), mm: new Set(MM_METRICS) };

/** Whether a metric identifier is one of the type's (part 4.9: every level, size and amount). */
export const isTargetMetric = (type: TargetType, metric: string): boolean => METRICS[type].has(metric);

/** Spread and slippage are met at or below their threshold; every other metric at or above it. */
export function defaultDirection(metric: string): Direction {
  return metric.startsWith('spread/') || metric.startsWith('slippage/') ? 'below' : 'above';
}
