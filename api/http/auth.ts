// Authentication and role checks, the same for every route: `Authorization: Token <token>`
// (specification part 5), `Api-Key <key>` where a route lets keys in (addendum section 3),
// and the local operator's `Ops-Token <secret>` where allowed.
import crypto from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { User } from '../../domain/accounts/users.ts';
import { recordApiKeyUse, verifyApiKey, type ApiKeyScope } from '../auth/api-keys.ts';
import type { ApiDeps } from '../deps.ts';
import { forbidden, invalidToken, notAuthenticated } from './errors.ts';

export type { ApiKeyScope } from '../auth/api-keys.ts';

export interface Principal {
  user: User;
  via: 'token' | 'ops' | 'api-key';
  /** Digest of the token used, so logout revokes just that one. */
  tokenDigest?: string;
  expiry?: Date;
  /** The API key used (via 'api-key'). */
  apiKey?: { id: number; scopes: string[] };
}

export interface AuthenticateOptions {
  /** Also accept the local operator's secret (`Ops-Token`), as the fixture loader does. */
  allowOpsToken?: boolean;
  /**
   * Also accept `Authorization: Api-Key <key>` when the key carries this scope (or, given a
   * list, any of them). Without it every API key gets 403: keys never manage the account.
   *
   *   router.get('/v2/metrics/summary/', authenticate(deps, { apiKeyScope: 'metrics:read' }), ...)
   *   router.post('/v2/organizations/reported-metrics/', authenticate(deps, { apiKeyScope: 'reported_metrics:write' }), ...)
   *
   * A key acts as its owner: the handler sees the owner in ctx.state.principal.user (with
   * via 'api-key'), so the owner's organizations and roles apply unchanged. A malformed,
   * unknown, revoked or expired key gets 401 `Invalid token.` on every route.
   */
  apiKeyScope?: ApiKeyScope | readonly ApiKeyScope[];
}

export const API_KEY_MESSAGES = {
  notAllowed: 'API keys cannot be used for this endpoint.',
  missingScope: (scopes: readonly string[]) => `This API key lacks the ${scopes.map((s) => `"${s}"`).join(' or ')} scope.`,
} as const;

declare module 'koa' {
  interface DefaultState {
    principal?: Principal;
    body?: unknown;
    query?: unknown;
  }
}

function parseAuthorization(header: string | undefined): { scheme: string; credentials: string } | undefined {
  if (!header) return undefined;
  const m = /^(\S+)(?: (.*))?$/.exec(header);
  if (!m) return undefined;
  return { scheme: m[1]!, credentials: (m[2] ?? '').trim() };
}

export function authenticate(deps: ApiDeps, opts: AuthenticateOptions = {}): Middleware {
  const keyScopes: readonly ApiKeyScope[] | undefined =
    opts.apiKeyScope === undefined ? undefined : typeof opts.apiKeyScope === 'string' ? [opts.apiKeyScope] : opts.apiKeyScope;
  return async (ctx, next) => {
    const auth = parseAuthorization(ctx.get('Authorization') || undefined);
    if (auth?.scheme === 'Token') {
      if (!auth.credentials) throw invalidToken();
      const info = await deps.tokens.authenticate(auth.credentials);
      if (!info) throw invalidToken();
      const user = await activeUser(deps, info.userId);
      ctx.state.principal = { user, via: 'token', tokenDigest: info.digest, expiry: info.expiry };
    } else if (auth?.scheme === 'Api-Key') {
      const key = await verifyApiKey(deps, auth.credentials);
      if (!key) throw invalidToken();
      const user = await activeUser(deps, key.userId);
      if (!keyScopes) throw forbidden(API_KEY_MESSAGES.notAllowed);
      if (!keyScopes.some((s) => key.scopes.includes(s))) throw forbidden(API_KEY_MESSAGES.missingScope(keyScopes));
      await recordApiKeyUse(deps, key.id);
      ctx.state.principal = { user, via: 'api-key', apiKey: { id: key.id, scopes: key.scopes } };
    } else if (auth?.scheme === 'Ops-Token' && opts.allowOpsToken) {
      // The local operator's secret, written to DATA_DIR at start (used by `npm run seed`).
      if (!deps.opsToken || !safeEqual(auth.credentials, deps.opsToken)) throw invalidToken();
      ctx.state.principal = { user: OPERATOR, via: 'ops' };
    } else {
      throw notAuthenticated();
    }
    await next();
  };
}

async function activeUser(deps: ApiDeps, id: number): Promise<User> {
  const user = await deps.activeUsers.get(id);
  if (!user || !user.is_active) throw invalidToken();
  return user;
}

export const requireStaff: Middleware = async (ctx, next) => {
  if (!ctx.state.principal?.user.is_staff) throw forbidden();
  await next();
};

/** Only an interactive sign-in (not the operator secret, not an API key) may manage the session. */
export const requireUserToken: Middleware = async (ctx, next) => {
  if (ctx.state.principal?.via !== 'token') throw forbidden();
  await next();
};

const OPERATOR: User = { id: 0, email: '', username: 'operator', first_name: '', last_name: '', is_staff: true, is_active: true };

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

export function principalOf(state: { principal?: Principal }): Principal {
  if (!state.principal) throw notAuthenticated();
  return state.principal;
}

/** An operation's guard (`Guarded`, api/http/contract.ts): 403 with `message` unless `may` says the caller may use the operation at all. */
export const allowedIf =
  (may: (ctx: Context) => Promise<boolean>, message: string): Middleware =>
  async (ctx, next) => {
    if (!(await may(ctx))) throw forbidden(message);
    await next();
  };
