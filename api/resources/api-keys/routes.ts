// API keys (specification 2.3, 3.4, 4.3; addendum section 3):
// POST /v1/user/api-keys/ creates one (password, and the code when two-factor is on);
// GET lists the account's keys without secrets; DELETE /v1/user/api-keys/<id>/ revokes.
// Keys are presented as `Authorization: Api-Key <key>` (api/http/auth.ts).
import { pathId, type BodyOf, type Handlers } from '../../http/contract.ts';
import type { ApiKeyRecord } from '../../../domain/accounts/api-keys.ts';
import { API_KEY_MAX_LIFETIME_MS, generateApiKey, MAX_ACTIVE_API_KEYS } from '../../auth/api-keys.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { badRequest, messageError, notFound } from '../../http/errors.ts';
import { accountOf, requireCodeIfEnrolled, requirePassword, throttleSignedIn } from '../../auth/account-checks.ts';

export const API_KEY_ROUTE_MESSAGES = {
  limit: `You already have ${MAX_ACTIVE_API_KEYS} active API keys; revoke one before creating another.`,
  expiresInPast: 'Must be in the future.',
  expiresTooLate: 'Must be at most one year from now.',
} as const;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const presentApiKey = (k: ApiKeyRecord) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  scopes: k.scopes,
  created_at: iso(k.createdAt),
  expires_at: iso(k.expiresAt),
  last_used_at: iso(k.lastUsedAt),
});

export function apiKeyHandlers(deps: ApiDeps): Handlers {
  return {
    createApiKey: [throttleSignedIn(deps, 'api-key-create', 'apiKeyCreatePerAccount', 'apiKeyCreatePerAddress'), async (ctx) => {
        const body = ctx.state.body as BodyOf<'createApiKey'>;
        const user = await accountOf(deps, principalOf(ctx.state).user.id);
        const now = deps.now();
        let expiresAt = now + API_KEY_MAX_LIFETIME_MS;
        if (body.expires_at !== undefined) {
          expiresAt = Date.parse(body.expires_at);
          if (expiresAt <= now) throw badRequest({ expires_at: [API_KEY_ROUTE_MESSAGES.expiresInPast] });
          if (expiresAt > now + API_KEY_MAX_LIFETIME_MS) throw badRequest({ expires_at: [API_KEY_ROUTE_MESSAGES.expiresTooLate] });
        }
        await requirePassword(user, body.password);
        await requireCodeIfEnrolled(deps, user.id, body.code);

        // Count and insert under a per-account lock shared by every API process, so
        // concurrent requests cannot together pass the limit.
        const created = await deps.locks.with(`api-keys:${user.id}`, async () => {
          const at = deps.now();
          if ((await deps.apiKeys.countActive(user.id, at)) >= MAX_ACTIVE_API_KEYS) throw messageError(API_KEY_ROUTE_MESSAGES.limit);
          const id = await deps.ids.next('api_keys', await deps.apiKeys.maxId());
          const { key, prefix, hash } = generateApiKey();
          const record: ApiKeyRecord = { id, userId: user.id, name: body.name, prefix, scopes: [...new Set(body.scopes)], createdAt: at, expiresAt, revokedAt: null, lastUsedAt: null };
          await deps.apiKeys.insert({ ...record, keyHash: hash });
          return { record, key };
        });
        deps.log.info('API key created', { user_id: user.id, key_id: created.record.id, prefix: created.record.prefix, scopes: created.record.scopes.join(',') });
        ctx.status = 201;
        ctx.body = { ...presentApiKey(created.record), key: created.key };
      }],

    listApiKeys: async (ctx) => {
      ctx.body = (await deps.apiKeys.listForUser(principalOf(ctx.state).user.id)).map(presentApiKey);
    },

    revokeApiKey: async (ctx) => {
      const userId = principalOf(ctx.state).user.id;
      const key = await deps.apiKeys.byIdForUser(pathId(ctx), userId);
      if (!key || key.revokedAt !== null) throw notFound();
      await deps.apiKeys.revoke(key.id, deps.now());
      deps.log.info('API key revoked', { user_id: userId, key_id: key.id });
      ctx.status = 204;
    },
  };
}
