// The parameters of the market endpoints (specification 4.1, 4.5-4.7, 4.13, 4.14; addendum
// section 3), as one ajv schema. They arrive as a query string (strings, repeated keys) or
// a JSON body (lists as arrays or comma-separated strings, numbers as numbers): `normalize`
// makes both one shape first. An empty value or an empty list is the parameter left out
// (its default). Messages name the value that was refused, as clients of these endpoints
// know them.
import type { ErrorObject } from 'ajv';
import { INTERVALS, LEVELS_BPS, LOOKBACKS, SESSIONS, type Interval, type Session } from '../../../domain/market/facts.ts';
import type { SessionDay } from '../../../domain/market/window.ts';
import type { ValidateFunction } from 'ajv';
import { withOffsetSign } from '../../../schemas/index.ts';
import { Contract, type OperationId } from '../../http/contract.ts';
import type { FieldErrors } from '../../http/errors.ts';

export type RawParams = Record<string, unknown>;

/** The parameters once valid. Lists are never empty: an empty one was left out. */
export interface MarketParams {
  interval?: Interval;
  time_start?: string;
  time_end?: string;
  lookback?: string;
  market_hours_session?: Session;
  /** `<week>:<day>`, as checked; `sessionDays` reads them. */
  market_hours_days?: string[];
  market_hours_timezone?: string;
  assets?: string[];
  bps?: number[];
  amounts?: number[];
  exchanges?: string[];
  market_type?: 'all' | 'spot' | 'perp';
  page?: number;
  sort_by?: string;
  sort_direction?: 'asc' | 'desc';
  /** The market-maker endpoints' organizations filter. */
  organizations?: string[];
  /** Reconciliation: how far a report may exceed the measurement, in percent. */
  tolerance_pct?: number;
}

const LISTS = ['assets', 'bps', 'amounts', 'exchanges', 'market_hours_days', 'organizations'] as const;

/** `<week>:<day>` texts (checked by the contract) as the days of a session. */
export const sessionDays = (days: readonly string[]): SessionDay[] =>
  days.map((d) => {
    const [week, day] = d.split(':');
    return { week: week as SessionDay['week'], day: Number(day) };
  });

/** The window's parameters: their problems are reported before any other's. */
export const WINDOW_FIELDS = ['interval', 'time_start', 'time_end', 'lookback', 'market_hours_session', 'market_hours_days', 'market_hours_timezone'] as const;

/** The order fields are reported in. */
const FIELD_ORDER = [...WINDOW_FIELDS, 'organizations', 'assets', 'bps', 'amounts', 'exchanges', 'market_type', 'page', 'sort_by', 'sort_direction', 'tolerance_pct'];

const MAX_LIST = { bps: 25, amounts: 25, exchanges: 100, organizations: 100 };

/** A bad list: not strings, numbers or (for days) objects. */
const NOT_A_LIST = Symbol('not a list');

function normalizeList(name: (typeof LISTS)[number], v: unknown): unknown {
  const items = Array.isArray(v) ? v : [v];
  const out: unknown[] = [];
  for (const item of items) {
    if (typeof item === 'string') {
      for (const part of item.split(',')) if (part.trim() !== '') out.push(part.trim());
    } else if (typeof item === 'number' && Number.isFinite(item)) out.push(String(item));
    else if (name === 'market_hours_days' && item !== null && typeof item === 'object' && !Array.isArray(item)) out.push(item);
    else return NOT_A_LIST;
  }
  if (name !== 'market_hours_days') return out.length === 0 ? undefined : out;
  // {week, day} objects become `<week>:<day>`, as the query string writes them.
  const days = out.map((item) => (item !== null && typeof item === 'object' ? `${String((item as SessionDay).week)}:${String((item as SessionDay).day)}` : item));
  return days.length === 0 ? undefined : days;
}

/** Both forms as one: lists as arrays of strings, scalars as strings; empty values dropped. */
export function normalize(raw: RawParams): { params: RawParams; problems: FieldErrors } {
  const params: RawParams = {};
  const problems: FieldErrors = {};
  for (const [name, v] of Object.entries(raw)) {
    if (v === undefined || v === null || v === '') continue;
    if ((LISTS as readonly string[]).includes(name)) {
      const list = normalizeList(name as (typeof LISTS)[number], v);
      if (list === NOT_A_LIST) problems[name] = ['Expected a list of values or a comma-separated string.'];
      else if (list !== undefined) params[name] = list;
      continue;
    }
    // A repeated query key with one value, or a one-element array, is that value.
    const values = Array.isArray(v) ? [...new Set(v)] : v;
    const one = Array.isArray(values) && values.length === 1 ? values[0] : values;
    if (Array.isArray(one) && one.length === 0) continue;
    params[name] = typeof one === 'string' ? one.trim() : one;
  }
  return { params, problems };
}

export { withOffsetSign };

// The parameters' schemas are the contract's (api/openapi.yaml): each endpoint's query
// parameters, whichever form the request came in.
const contract = new Contract();
const MARKET: readonly OperationId[] = ['getLeaderboard', 'getDepthUptime', 'getReconciliation', 'getMarketMakerSummary'];

export const validators = {
  any: contract.parameterCheck(MARKET) as ValidateFunction<MarketParams>,
  /** Summary answers one aggregate over the window. */
  wholeWindow: contract.parameterCheck(['getMarketSummary', ...MARKET]) as ValidateFunction<MarketParams>,
  /** Reported volume (specification 4.12) accepts these intervals only. */
  reportedVolume: contract.parameterCheck(['getReportedVolume', ...MARKET]) as ValidateFunction<MarketParams>,
};

/** One ajv error in the words these endpoints use, naming the value refused. */
function messageOf(field: string, e: ErrorObject): string {
  const value = e.data;
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  if (e.keyword === 'type' && e.params.type === 'string' && e.instancePath.split('/').length === 2) return 'Not a valid string.';
  switch (field) {
    case 'time_start':
    case 'time_end':
      return 'Enter a valid ISO 8601 date-time, e.g. 2026-06-25T10:00:00Z.';
    case 'market_hours_timezone':
      return `"${shown}" is not a known time zone name (e.g. America/New_York).`;
    case 'market_hours_days':
      if (e.keyword === 'type' && e.instancePath.split('/').length === 3) return `"${shown}" is not <week>:<day>, e.g. this:1.`;
      if (e.instancePath.endsWith('/week') || (e.keyword === 'required' && e.params.missingProperty === 'week')) return 'week must be "this" or "last".';
      return 'day must be 0 (Sunday) to 6 (Saturday).';
    case 'bps':
      if (e.keyword === 'maxItems') break;
      return `"${shown}" is not a supported level; supported: ${LEVELS_BPS.join(', ')}.`;
    case 'amounts':
      if (e.keyword === 'maxItems') break;
      return `"${shown}" is not a positive number of USD.`;
    case 'page':
      return 'A valid integer >= 1 is required.';
    case 'tolerance_pct':
      return 'A number of percent >= 0 is required.';
  }
  if (e.keyword === 'maxItems') return `Ensure this field has no more than ${String(e.params.limit)} elements.`;
  if (e.keyword === 'enum') return `"${shown}" is not a valid choice; expected one of: ${(e.params.allowedValues as unknown[]).join(', ')}.`;
  return 'Invalid value.';
}

/** Problems by field, in the order fields are reported in. */
export class Problems {
  private readonly byField = new Map<string, string[]>();

  add(field: string, message: string): void {
    const list = this.byField.get(field) ?? [];
    if (!list.includes(message)) list.push(message);
    this.byField.set(field, list);
  }

  addAjv(errors: ErrorObject[]): void {
    for (const e of errors) {
      const field = e.instancePath.split('/')[1] ?? '';
      this.add(field, messageOf(field, e));
    }
  }

  addAll(fields: FieldErrors): void {
    for (const [field, messages] of Object.entries(fields)) for (const m of messages as string[]) this.add(field, m);
  }

  /** Whether some of `fields` (all when not given) have problems. */
  any(fields?: readonly string[]): boolean {
    return fields ? fields.some((f) => this.byField.has(f)) : this.byField.size > 0;
  }

  /** The problems of `fields` (all when not given), ordered as fields are reported. */
  fields(fields?: readonly string[]): FieldErrors {
    const names = [...this.byField.keys()].filter((f) => !fields || fields.includes(f));
    names.sort((a, b) => rank(a) - rank(b));
    return Object.fromEntries(names.map((f) => [f, this.byField.get(f)!]));
  }
}

const rank = (field: string) => {
  const i = FIELD_ORDER.indexOf(field);
  return i < 0 ? FIELD_ORDER.length : i;
};
