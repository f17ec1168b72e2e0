// Threshold scaling (addendum section 6): in `price` mode with scaling enabled, a target's
// effective threshold is its threshold x current price / reference price. The current price
// comes from the target's `scaling_source`: the asset's 24-hour TWAP, the TWAP recorded on
// its active loan, or for `manual` the reference itself (factor 1). Read by the evaluator
// and by every answer that shows a target.
import type { ScalingMode, ScalingSource, TargetType } from './facts.ts';

/** What scaling reads of a target (domain/targets/repository.ts, Target). */
export interface Scalable {
  type: TargetType;
  organization: string;
  asset: string;
  threshold: number;
  scaling_enabled: boolean;
  scaling_mode: ScalingMode;
  scaling_source: ScalingSource;
  scaling_reference_price: number;
}

export interface Scaled {
  effective_threshold: number;
  current_price: number | null;
  scaling_factor: number;
}

/**
 * The loan a `loan_twap` target follows: a market maker's target follows the active loan made
 * to it on the target's asset, a project's target the active loan it made of that asset.
 */
export const loanKey = (type: TargetType, organization: string, asset: string) => `${type}\u0000${organization}\u0000${asset}`;

/** Whether the threshold follows a price: only those targets' prices are looked up. */
export const followsPrice = (t: Pick<Scalable, 'scaling_enabled' | 'scaling_mode'>): boolean => t.scaling_enabled && t.scaling_mode === 'price';

/**
 * The current price a target shows: the reference itself for `manual` (whether or not
 * scaling is on), the price last looked up for the other sources (null before the first,
 * and while the source has none).
 */
export const shownCurrentPrice = (t: Pick<Scalable, 'scaling_source' | 'scaling_reference_price'>, lookedUp: number | null): number | null =>
  t.scaling_source === 'manual' ? t.scaling_reference_price : lookedUp;

/** A threshold under a scaling factor. */
export const scaledThreshold = (threshold: number, factor: number): number => threshold * factor;

/** The effective threshold, the current price and the factor, given the prices looked up (by asset, and by loanKey). */
export function scaling(t: Scalable, twap: ReadonlyMap<string, number>, loanTwap: ReadonlyMap<string, number> = new Map()): Scaled {
  const current =
    t.scaling_source === 'manual' ? t.scaling_reference_price : t.scaling_source === 'asset_twap_24h' ? twap.get(t.asset) ?? null : loanTwap.get(loanKey(t.type, t.organization, t.asset)) ?? null;
  if (!followsPrice(t)) return { effective_threshold: t.threshold, current_price: shownCurrentPrice(t, null), scaling_factor: 1 };
  // No price yet (no book data, or no active loan with a recorded TWAP): the threshold as it is.
  if (current === null || !(t.scaling_reference_price > 0)) return { effective_threshold: t.threshold, current_price: current, scaling_factor: 1 };
  const factor = current / t.scaling_reference_price;
  return { effective_threshold: scaledThreshold(t.threshold, factor), current_price: current, scaling_factor: factor };
}
