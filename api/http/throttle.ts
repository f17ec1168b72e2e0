// Fixed-window throttles in Redis: one INCR per attempt, the window's remaining time is
// the wait. Counters are disposable, so Redis is the right home for them.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { throttled } from './errors.ts';

export interface Limit {
  /** Attempts allowed per window. */
  limit: number;
  windowMs: number;
}

export class Throttle {
  constructor(private readonly redis: Redis) {}

  /**
   * Counts one attempt against every (scope, key) given; throws 429 with the seconds to
   * wait when any of them is over its limit.
   */
  async hit(checks: { scope: string; key: string; limit: Limit }[]): Promise<void> {
    const multi = this.redis.multi();
    const keys = checks.map((c) => `throttle:${c.scope}:${hashKey(c.key)}`);
    checks.forEach((c, i) => {
      multi.incr(keys[i]!);
      multi.pexpire(keys[i]!, c.limit.windowMs, 'NX');
      multi.pttl(keys[i]!);
    });
    const results = (await multi.exec()) ?? [];
    let wait = 0;
    checks.forEach((c, i) => {
      const count = Number(results[i * 3]?.[1] ?? 0);
      const ttl = Number(results[i * 3 + 2]?.[1] ?? c.limit.windowMs);
      if (count > c.limit.limit) wait = Math.max(wait, ttl > 0 ? ttl : c.limit.windowMs);
    });
    if (wait > 0) throw throttled(wait / 1000);
  }
}

// Keys may hold e-mail addresses: hash them so Redis holds no personal data.
const hashKey = (key: string) => crypto.createHash('sha256').update(key).digest('base64url').slice(0, 22);
