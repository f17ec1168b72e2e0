// The window a target is evaluated over (addendum section 6): the trailing hour before the
// minute evaluated, and for a session target only its part inside the session (New York
// time, this week's and last week's intervals).
import { DEFAULT_SESSION_ZONE } from '../market/facts.ts';
import { mergeRanges, sessionRanges, type Range, type SessionDay } from '../market/window.ts';
import { SESSION_OF, type TargetSession } from './facts.ts';
import { HOUR_MS } from '../../lib/time.ts';

export const WINDOW_MS = HOUR_MS;

const ALL_DAYS: SessionDay[] = (['last', 'this'] as const).flatMap((week) => [0, 1, 2, 3, 4, 5, 6].map((day) => ({ week, day })));

/** The part of the window [minute - 60 min, minute) a target is evaluated over; empty outside its session. */
export function windowOf(session: TargetSession | null, minute: number): Range[] {
  const whole: Range = [minute - WINDOW_MS, minute];
  if (!session) return [whole];
  // This week's and last week's session intervals around the window, clipped to it.
  const ranges = [...sessionRanges(SESSION_OF[session], ALL_DAYS, DEFAULT_SESSION_ZONE, minute), ...sessionRanges(SESSION_OF[session], ALL_DAYS, DEFAULT_SESSION_ZONE, minute + 7 * 24 * HOUR_MS)];
  return mergeRanges(ranges.map(([a, b]): Range => [Math.max(a, whole[0]), Math.min(b, whole[1])]).filter(([a, b]) => a < b));
}
