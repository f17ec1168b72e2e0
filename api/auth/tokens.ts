// Access tokens live in Redis, stored under a SHA-256 digest of the token: a leak of Redis
// gives no usable token. A token idles out after its idle lifetime (1 day, 7 with
// remember_me), sliding on every use, and never lives past 30 days after login. Losing
// Redis only signs everybody out.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { DAY_MS } from '../../lib/time.ts';

export const TOKEN_IDLE_MS = DAY_MS;
export const REMEMBER_ME_IDLE_MS = 7 * DAY_MS;
export const TOKEN_MAX_AGE_MS = 30 * DAY_MS;

export interface TokenInfo {
  userId: number;
  digest: string;
  /** When the token expires if not used again. */
  expiry: Date;
}

export interface IssuedToken {
  token: string;
  expiry: Date;
}

const tokenKey = (digest: string) => `auth:token:${digest}`;
const userKey = (userId: number) => `auth:user-tokens:${userId}`;

export const digestOf = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

// Read, check the absolute limit and slide the idle expiry in one round trip, atomically.
const TOUCH_SCRIPT = `
local h = redis.call('HMGET', KEYS[1], 'user_id', 'max_at', 'idle_ms')
if not h[1] then return nil end
local now = tonumber(ARGV[1])
local ttl = math.min(tonumber(h[3]), tonumber(h[2]) - now)
if ttl <= 0 then redis.call('DEL', KEYS[1]) return nil end
redis.call('PEXPIRE', KEYS[1], ttl)
return {h[1], tostring(ttl)}
`;

type TouchRedis = Redis & { touchToken(key: string, now: number): Promise<[string, string] | null> };

export class TokenStore {
  private readonly redis: TouchRedis;

  constructor(
    redis: Redis,
    private readonly now: () => number = Date.now,
  ) {
    redis.defineCommand('touchToken', { numberOfKeys: 1, lua: TOUCH_SCRIPT });
    this.redis = redis as TouchRedis;
  }

  async issue(userId: number, rememberMe: boolean): Promise<IssuedToken> {
    // 32 random bytes: 256 bits, far beyond guessing.
    const token = crypto.randomBytes(32).toString('hex');
    const digest = digestOf(token);
    const now = this.now();
    const idle = rememberMe ? REMEMBER_ME_IDLE_MS : TOKEN_IDLE_MS;
    const ttl = Math.min(idle, TOKEN_MAX_AGE_MS);
    await this.redis
      .multi()
      .hset(tokenKey(digest), { user_id: userId, created_at: now, max_at: now + TOKEN_MAX_AGE_MS, idle_ms: idle })
      .pexpire(tokenKey(digest), ttl)
      .sadd(userKey(userId), digest)
      .pexpire(userKey(userId), TOKEN_MAX_AGE_MS)
      .exec();
    return { token, expiry: new Date(now + ttl) };
  }

  /** The token's owner, sliding its expiry; undefined when unknown, revoked or expired. */
  async authenticate(token: string): Promise<TokenInfo | undefined> {
    if (!/^[0-9a-f]{64}$/.test(token)) return undefined;
    const digest = digestOf(token);
    const now = this.now();
    const hit = await this.redis.touchToken(tokenKey(digest), now);
    if (!hit) return undefined;
    return { userId: Number(hit[0]), digest, expiry: new Date(now + Number(hit[1])) };
  }

  /** Whether the token of this digest is still valid, without sliding its expiry (an open stream's recheck). */
  async isActive(digest: string): Promise<boolean> {
    return (await this.redis.exists(tokenKey(digest))) === 1;
  }

  async revoke(digest: string, userId: number): Promise<void> {
    await this.redis.multi().del(tokenKey(digest)).srem(userKey(userId), digest).exec();
  }

  /** Revokes every token of the user except `keep` (password change). */
  async revokeAll(userId: number, keep?: string): Promise<number> {
    const digests = (await this.redis.smembers(userKey(userId))).filter((d) => d !== keep);
    if (digests.length === 0) return 0;
    const multi = this.redis.multi();
    for (const d of digests) multi.del(tokenKey(d)).srem(userKey(userId), d);
    await multi.exec();
    return digests.length;
  }
}
