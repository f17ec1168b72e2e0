// From a market request's parameters (schemas.ts) to the domain's values: the window
// (domain/market/window.ts), the assets of the caller's that were asked for, the levels
// and amounts. Every problem is a 400 naming its field; the window's come first, then
// conflicting window parameters as non_field_errors, then the others together.
import { ASSET_MESSAGE } from '../../../domain/reference/visibility.ts';
import type { ValidateFunction } from 'ajv';
import { DateTime } from 'luxon';
import { LEVELS_BPS, UPTIME_AMOUNTS_USD, type Interval } from '../../../domain/market/facts.ts';
import { MAX_SPAN_MS, marketWindow, spanOf, type MarketWindow, type WindowSpan } from '../../../domain/market/window.ts';
import { badRequest, nonFieldError } from '../../http/errors.ts';
import { Problems, WINDOW_FIELDS, normalize, sessionDays, withOffsetSign, type MarketParams, type RawParams } from './schemas.ts';
import { DAY_MS } from '../../../lib/time.ts';

/** The bound of `assets` (specification 4.1); staff have none on the leaderboard. */
export const MAX_ASSETS = 100;

export interface ParsedRequest {
  params: MarketParams;
  window: MarketWindow;
  /** Problems of the parameters besides the window's, to report with the endpoint's own. */
  problems: Problems;
}

const instant = (s: string) => DateTime.fromISO(withOffsetSign(s), { zone: 'utc', setZone: true }).toMillis();

/**
 * Validates the parameters and builds the window: time_start/time_end, or a lookback, or a
 * trading session on selected days; the last 24 hours when none is given. Throws the
 * window's problems; returns the others. `rolledUpTo` as in MarketWindow (RolledUp).
 * `wholeWindow`: the endpoint reads the window as one bucket whatever `interval` says (the
 * leaderboard), so the interval is checked but bounds no span.
 */
export function parseRequest(raw: RawParams, validate: ValidateFunction<MarketParams>, now: number, rolledUpTo: number, opts: { wholeWindow?: boolean } = {}): ParsedRequest {
  const problems = new Problems();
  const { params, problems: listProblems } = normalize(raw);
  problems.addAll(listProblems);
  if (!validate(params)) problems.addAjv(validate.errors ?? []);
  if (problems.any(WINDOW_FIELDS)) throw badRequest(problems.fields(WINDOW_FIELDS));
  const p = params as MarketParams;

  const explicit = p.time_start !== undefined || p.time_end !== undefined;
  const session = p.market_hours_session;
  if (p.lookback && explicit) throw nonFieldError('lookback cannot be combined with time_start or time_end.');
  if (session && (explicit || p.lookback)) throw nonFieldError('market_hours_session cannot be combined with time_start, time_end or lookback.');
  if (session && !p.market_hours_days) throw badRequest({ market_hours_days: ['This field is required with market_hours_session.'] });
  if (p.market_hours_days && !session) throw badRequest({ market_hours_session: ['This field is required with market_hours_days.'] });

  let span: WindowSpan;
  if (session) span = { kind: 'session', session, days: sessionDays(p.market_hours_days!) };
  else if (p.lookback) span = { kind: 'lookback', lookback: p.lookback };
  else if (explicit) {
    const to = p.time_end !== undefined ? instant(p.time_end) : now;
    const from = p.time_start !== undefined ? instant(p.time_start) : to - DAY_MS;
    if (from >= to) throw badRequest({ time_start: ['Must be before time_end.'] });
    span = { kind: 'range', from, to };
  } else span = { kind: 'last-day' };

  const interval: Interval = opts.wholeWindow ? 'a' : (p.interval ?? 'a');
  const window = marketWindow(interval, span, p.market_hours_timezone, now, rolledUpTo);
  const length = spanOf(window);
  if (length > MAX_SPAN_MS[interval]) {
    throw badRequest({
      interval: [`A window of ${Math.ceil(length / DAY_MS)} days is too long for interval "${interval}" (at most ${Math.round(MAX_SPAN_MS[interval] / DAY_MS)} days); use a larger interval.`],
    });
  }
  return { params: p, window, problems };
}

/** The levels asked for, each once, in order; all of L by default. */
export function levelsOf(p: MarketParams): number[] {
  return p.bps ? [...new Set(p.bps)].sort((a, b) => a - b) : [...LEVELS_BPS];
}

/** Depth-uptime order sizes in USD, each once, in the order given; the five standard ones by default. */
export function amountsOf(p: MarketParams): number[] {
  return p.amounts ? [...new Set(p.amounts)] : [...UPTIME_AMOUNTS_USD];
}

/**
 * The assets asked for (at most `max`), each one the caller's (unknown and unauthorized get
 * the same message); `byDefault` when none are given.
 */
export function assetsOf(p: MarketParams, allowed: readonly string[], problems: Problems, opts: { max?: number; byDefault?: readonly string[] } = {}): string[] {
  if (!p.assets) return [...(opts.byDefault ?? allowed)];
  const max = opts.max ?? MAX_ASSETS;
  if (p.assets.length > max) problems.add('assets', `Ensure this field has no more than ${max} elements.`);
  const set = new Set(allowed);
  const out: string[] = [];
  for (const a of p.assets) {
    if (!set.has(a)) problems.add('assets', ASSET_MESSAGE(a));
    else if (!out.includes(a)) out.push(a);
  }
  return out;
}
