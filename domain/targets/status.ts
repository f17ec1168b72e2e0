// The status machine of a target (addendum section 6), one evaluation at a time:
// unchecked -> stable (met) or alert (not met); stable -> alert; alert -> recovering (met);
// recovering -> stable after 3 met evaluations in a row (the one that entered recovering
// counts as the first), or back to alert. An evaluation without a value (no data in the
// window, or a metric not measured) changes nothing.
import type { Direction, TargetStatus } from './facts.ts';

export const RECOVERY_EVALUATIONS = 3;

export interface Standing {
  status: TargetStatus;
  /** Met evaluations in a row while recovering. */
  streak: number;
}

export function isMet(value: number, threshold: number, direction: Direction): boolean {
  return direction === 'above' ? value >= threshold : value <= threshold;
}

export function nextStanding(s: Standing, met: boolean | null): Standing {
  if (met === null) return s;
  switch (s.status) {
    case 'unchecked':
      return { status: met ? 'stable' : 'alert', streak: 0 };
    case 'stable':
      return met ? s : { status: 'alert', streak: 0 };
    case 'alert':
      return met ? { status: 'recovering', streak: 1 } : s;
    case 'recovering':
      if (!met) return { status: 'alert', streak: 0 };
      return s.streak + 1 >= RECOVERY_EVALUATIONS ? { status: 'stable', streak: 0 } : { status: 'recovering', streak: s.streak + 1 };
  }
}

/**
 * When a status change is dated in `updates`: when the evaluator decided it (its clock), never
 * before the target was made nor before the change it follows. The minute evaluated can lie
 * before the target's creation (a new target's first window is the trailing hour), and
 * catching up decides several minutes at one moment; the minute stays on the evaluation and
 * the event.
 */
export function changeDate(decidedAt: number, createdAt: number, updates: readonly { updated_at: number }[]): number {
  return Math.max(decidedAt, createdAt, updates[updates.length - 1]?.updated_at ?? createdAt);
}
