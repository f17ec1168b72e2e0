// What the market handlers share: the repositories and caches they read through, and the
// caller's visible market (domain/reference/visibility.ts) with the pairs of the assets asked.
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { BookPartial, DerivativePartial, PartialKey, TradePartial } from '../../../domain/market/families/index.ts';
import type { Pair, ReferenceLists } from '../../../domain/reference/repository.ts';
import type { PartialsRepository } from '../../../domain/market/repositories/partials.ts';
import type { UptimeRepository } from '../../../domain/market/repositories/uptime.ts';
import { callerScope, type CallerScope } from '../../../domain/reference/visibility.ts';
import type { User } from '../../../domain/accounts/users.ts';
import type { UptimeRows } from '../../market-caches/uptime-rows.ts';
import type { WindowPartials, WindowPartialsResult } from '../../market-caches/window-partials.ts';
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
  scopes: CallerScopes;
}

/** One endpoint's work, from its parameters (query string or JSON body) and the caller to the response. */
export type MarketHandler = (ctx: Context, raw: RawParams, caller: Caller) => Promise<void>;

export interface Caller {
  user: User;
  scope: CallerScope;
}

export async function callerOf(s: MarketServices, ctx: Context): Promise<Caller> {
  const user = principalOf(ctx.state).user;
  return { user, scope: await s.scopes.of(user) };
}

/**
 * Callers' scopes, each computed once per user row and reference lists as the service's
 * shared reads hold them (lib/shared-reads.ts: re-read after 2 s, dropped by a fixture load,
 * the only way memberships and coverage change), so a scope is exactly as fresh as those.
 * It reads nothing from ClickHouse any more (memberships and coverage are shared reads
 * too); keeping it spares each request filtering every pair against the caller's coverage.
 */
export class CallerScopes {
  private readonly byUser = new WeakMap<User, { lists: ReferenceLists; scope: Promise<CallerScope> }>();
  private readonly digests = new WeakMap<CallerScope, string>();

  constructor(private readonly deps: MarketServices['deps']) {}

  async of(user: User): Promise<CallerScope> {
    const lists = await this.deps.referenceLists.lists();
    const kept = this.byUser.get(user);
    if (kept && kept.lists === lists) return kept.scope;
    const scope = callerScope(this.deps, user);
    this.byUser.set(user, { lists, scope });
    scope.catch(() => {
      if (this.byUser.get(user)?.scope === scope) this.byUser.delete(user);
    });
    return scope;
  }

  /** A short digest of what the scope shows (its assets and pairs), kept as long as the scope. */
  digest(scope: CallerScope): string {
    let digest = this.digests.get(scope);
    if (digest === undefined) {
      digest = createHash('sha1').update(JSON.stringify([scope.assets, scope.pairs])).digest('base64');
      this.digests.set(scope, digest);
    }
    return digest;
  }
}

/** The caller's pairs of these assets, in the caller's order. */
export function pairsOf(scope: CallerScope, assets: readonly string[]): Pair[] {
  const set = new Set(assets);
  return scope.pairs.filter((x) => set.has(x.asset));
}

const key = (exchange: string, pair: string) => `${exchange}\u0000${pair}`;

/** A pair with data in the window, and each family's partial of it. */
export interface PairWindow {
  pair: Pair;
  book: BookPartial | undefined;
  trade: TradePartial | undefined;
  derivative: DerivativePartial | undefined;
}

/** The pairs with book or trade data in a whole window (interval `a`), in the order given. */
export function* pairsWithData(pairs: readonly Pair[], partials: WindowPartialsResult): Generator<PairWindow> {
  const index = <T extends PartialKey>(rows: readonly T[]) => new Map(rows.map((r) => [key(r.exchange, r.pair), r]));
  const [books, trades, derivatives] = [index(partials.book), index(partials.trade), index(partials.derivative)];
  for (const pair of pairs) {
    const k = key(pair.exchange, pair.pair);
    const book = books.get(k);
    const trade = trades.get(k);
    if (book || trade) yield { pair, book, trade, derivative: derivatives.get(k) };
  }
}
