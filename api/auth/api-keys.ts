// Scoped API keys: `Authorization: Api-Key <key>` (addendum section 3).
//
// A key reads `mmk_<12 hex>_<64 hex>`. Its first 16 characters are the public `prefix`
// that finds the stored row; the rest is 256 random bits. Only the SHA-256 of the whole key
// is stored. A fast hash is enough here: slow hashes (argon2, bcrypt) protect *guessable*
// secrets such as passwords against offline guessing, and nobody can enumerate 2^256
// random secrets however fast the hash is. It also keeps authentication, which runs on
// every request made with a key, cheap (argon2 at 64 MiB per request would be a
// denial-of-service lever).
import crypto from 'node:crypto';
import type { ApiKeyCredential } from '../../domain/accounts/api-keys.ts';
import type { ApiDeps } from '../deps.ts';

export const API_KEY_SCOPES = ['metrics:read', 'reported_metrics:write'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Specification 3.4 and 8: at most 20 keys active per account. */
export const MAX_ACTIVE_API_KEYS = 20;
/** Lifetime of a key created without `expires_at`, and the longest one allowed. */
export const API_KEY_MAX_LIFETIME_MS = 365 * 86_400_000;
/** last_used_at is written at most once per this interval per key. */
export const API_KEY_USE_RECORD_MS = 60_000;

const FORMAT = /^(mmk_[0-9a-f]{12})_[0-9a-f]{64}$/;

export const hashApiKey = (key: string) => crypto.createHash('sha256').update(key).digest('hex');

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const prefix = `mmk_${crypto.randomBytes(6).toString('hex')}`;
  const key = `${prefix}_${crypto.randomBytes(32).toString('hex')}`;
  return { key, prefix, hash: hashApiKey(key) };
}

/** The active key this string is, or undefined (malformed, unknown, revoked, expired). */
export async function verifyApiKey(deps: Pick<ApiDeps, 'apiKeys' | 'now'>, raw: string): Promise<ApiKeyCredential | undefined> {
  const m = FORMAT.exec(raw);
  if (!m) return undefined;
  const hash = Buffer.from(hashApiKey(raw), 'hex');
  // Prefixes are random and practically unique; comparing every match keeps a collision harmless.
  const found = (await deps.apiKeys.byPrefix(m[1]!)).find((k) => crypto.timingSafeEqual(Buffer.from(k.keyHash, 'hex'), hash));
  if (!found || found.revoked || found.expiresAt <= deps.now()) return undefined;
  return found;
}

/**
 * Records that a request was let in with the key: at most once a minute per key (a Redis
 * marker gates the write), so a busy key costs no write per request. A failed write is
 * logged, never the request's failure.
 */
export async function recordApiKeyUse(deps: Pick<ApiDeps, 'apiKeys' | 'redis' | 'now' | 'log'>, keyId: number): Promise<void> {
  if ((await deps.redis.set(`api-key:used:${keyId}`, '1', 'PX', API_KEY_USE_RECORD_MS, 'NX')) !== 'OK') return;
  await deps.apiKeys.recordUse(keyId, deps.now()).catch((err: unknown) => deps.log.warn('recording API key use failed', { key_id: keyId, err: err as Error }));
}
