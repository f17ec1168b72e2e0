// A mutual-exclusion lock in Redis, held across every process of the service: SET NX with
// a random owner token and an expiry (so a crashed holder cannot block forever), released
// only by its owner. Used where a check and a write must not interleave (the API key limit,
// the agreements and targets batches, the keepers).
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';

/** The lock stayed taken for the whole wait; the API answers 429 with the seconds to retry after. */
export class LockBusy extends Error {
  constructor(readonly lock: string, readonly retryAfterSeconds: number) {
    super(`lock ${lock} is busy`);
    this.name = 'LockBusy';
  }
}

/** What a lock's user needs: tests and the domain take this, not the Redis class. */
export interface LockSource {
  with<T>(name: string, fn: () => Promise<T>, opts?: LockOptions): Promise<T>;
}

const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type LockRedis = Redis & { releaseLock(key: string, owner: string): Promise<number> };

export interface LockOptions {
  /** Longest the critical section may run before the lock lapses. */
  ttlMs: number;
  /** Longest to wait for the lock; then the request gets 429 and may retry. */
  waitMs: number;
}

const DEFAULTS: LockOptions = { ttlMs: 30_000, waitMs: 10_000 };

export class Locks implements LockSource {
  private readonly redis: LockRedis;

  constructor(redis: Redis) {
    redis.defineCommand('releaseLock', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    this.redis = redis as LockRedis;
  }

  /** Runs fn while holding the lock `name`; waits for it up to opts.waitMs. */
  async with<T>(name: string, fn: () => Promise<T>, opts: LockOptions = DEFAULTS): Promise<T> {
    const key = `lock:${name}`;
    const owner = crypto.randomBytes(16).toString('hex');
    const until = Date.now() + opts.waitMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      if ((await this.redis.set(key, owner, 'PX', opts.ttlMs, 'NX')) === 'OK') break;
      if (Date.now() >= until) throw new LockBusy(name, 1);
      await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random())));
    }
    try {
      return await fn();
    } finally {
      await this.redis.releaseLock(key, owner);
    }
  }
}
