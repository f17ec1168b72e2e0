// Short-lived, single-use records in Redis: the two-factor sign-in challenge (after a
// correct password) and the WebAuthn ceremonies (between options and finish). The id is
// 32 random bytes; the record carries its own expiry, checked against the injected clock,
// and a Redis TTL that removes it in any case.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';

export type ChallengeKind = 'totp-login' | 'passkey-register' | 'passkey-login';

/** How long a challenge or ceremony lives. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

const key = (kind: ChallengeKind, id: string) => `challenge:${kind}:${id}`;
const ID = /^[A-Za-z0-9_-]{43}$/;

export class ChallengeStore {
  constructor(
    private readonly redis: Redis,
    private readonly now: () => number = Date.now,
  ) {}

  async create<T extends object>(kind: ChallengeKind, data: T, ttlMs = CHALLENGE_TTL_MS): Promise<string> {
    const id = crypto.randomBytes(32).toString('base64url');
    await this.redis.set(key(kind, id), JSON.stringify({ data, expires_at: this.now() + ttlMs }), 'PX', ttlMs);
    return id;
  }

  /** Reads a live challenge without using it up (a wrong code may be retried). */
  async peek<T>(kind: ChallengeKind, id: string): Promise<T | undefined> {
    if (!ID.test(id)) return undefined;
    return this.live<T>(await this.redis.get(key(kind, id)));
  }

  /** Reads and removes in one step: of concurrent callers, one gets the record. */
  async take<T>(kind: ChallengeKind, id: string): Promise<T | undefined> {
    if (!ID.test(id)) return undefined;
    return this.live<T>(await this.redis.getdel(key(kind, id)));
  }

  /** Uses up a challenge read with peek(); false when someone else already did. */
  async consume(kind: ChallengeKind, id: string): Promise<boolean> {
    return (await this.redis.del(key(kind, id))) === 1;
  }

  private live<T>(raw: string | null): T | undefined {
    if (!raw) return undefined;
    const record = JSON.parse(raw) as { data: T; expires_at: number };
    return record.expires_at > this.now() ? record.data : undefined;
  }
}
