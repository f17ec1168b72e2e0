// What the market handlers share: the repositories and caches they read through, and the
// caller's visible market (domain/reference/visibility.ts) with the pairs of the assets asked.
import type { Context } from 'koa';
import type { Pair } from '../../../domain/reference/repository.ts';
import type { PartialsRepository } from '../../../domain/market/repositories/partials.ts';
import type { UptimeRepository } from '../../../domain/market/repositories/uptime.ts';
import { callerScope, type CallerScope } from '../../../domain/reference/visibility.ts';
import type { User } from '../../../domain/accounts/users.ts';
import type { UptimeRows } from '../../market-caches/uptime-rows.ts';
import type { WindowPartials } from '../../market-caches/window-partials.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import type { RawParams } from './schemas.ts';

export interface MarketServices {
  deps: ApiDeps;
  partials: PartialsRepository;
  uptime: UptimeRepository;
  /** Whole-window partials, sealed pieces kept between requests. */
  windowPartials: WindowPartials;
  /** Uptime JSON, sealed buckets kept between requests. */
  uptimeRows: UptimeRows;
}

/** One endpoint's work, from its parameters (query string or JSON body) to the response. */
export type MarketHandler = (ctx: Context, raw: RawParams) => Promise<void>;

export interface Caller {
  user: User;
  scope: CallerScope;
}

export async function callerOf(s: MarketServices, ctx: Context): Promise<Caller> {
  const user = principalOf(ctx.state).user;
  return { user, scope: await callerScope(s.deps, user) };
}

/** The caller's pairs of these assets, in the caller's order. */
export function pairsOf(scope: CallerScope, assets: readonly string[]): Pair[] {
  const set = new Set(assets);
  return scope.pairs.filter((x) => set.has(x.asset));
}

const key = (exchange: string, pair: string, b: number) => `${exchange}\u0000${pair}\u0000${b}`;

/** Partials by pair and bucket. */
export function byKey<T extends { exchange: string; pair: string; b: number }>(rows: readonly T[]): { get(exchange: string, pair: string, b?: number): T | undefined } {
  const map = new Map(rows.map((r) => [key(r.exchange, r.pair, r.b), r]));
  return { get: (exchange, pair, b = 0) => map.get(key(exchange, pair, b)) };
}
