// Two-factor codes (TOTP, RFC 6238: 30 s steps, 6 digits, SHA-1, one step of drift either
// way) and the rules around them, kept in Redis with the injected clock:
// * a code's time step may be used once per user: the last accepted step is remembered
//   and only a later one passes (so a code cannot be replayed within its window);
// * wrong codes are counted per user in a sliding window; LOCKOUT.failures of them within
//   LOCKOUT.windowMs lock the account for LOCKOUT.lockMs (addendum: 5 in 15 minutes lock
//   for 15 minutes). A correct code clears the count.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';
import { generateSecret, generateURI, verify } from 'otplib';

export const TOTP = { periodSeconds: 30, digits: 6, toleranceSeconds: 30 } as const;

export interface LockoutRule {
  failures: number;
  windowMs: number;
  lockMs: number;
}

export const LOCKOUT: LockoutRule = { failures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

export type CodeResult = { ok: true } | { ok: false; reason: 'wrong' | 'replayed' } | { ok: false; reason: 'locked'; waitMs: number };

// Accept a step only when it is later than the last one accepted for the user.
const USE_STEP_SCRIPT = `
local last = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) <= last then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

// Record a failure at ARGV[1], forget those from before the window (ARGV[3] is its start,
// exclusive), lock when too many.
const FAILURE_SCRIPT = `
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  redis.call('SET', KEYS[2], ARGV[5], 'PX', ARGV[6])
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

type TwoFactorRedis = Redis & {
  totpUseStep(key: string, step: number, ttlMs: number): Promise<number>;
  totpFailure(failures: string, lock: string, now: number, member: string, windowStart: number, max: number, until: number, lockMs: number, windowMs: number): Promise<number>;
};

const stepKey = (userId: number) => `totp:last-step:${userId}`;
const failuresKey = (userId: number) => `totp:failures:${userId}`;
const lockKey = (userId: number) => `totp:locked:${userId}`;

export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The otpauth:// URL authenticator apps read (usually as a QR code). */
export function otpauthUrl(issuer: string, account: string, secret: string): string {
  return generateURI({ issuer, label: account, secret, digits: TOTP.digits, period: TOTP.periodSeconds });
}

export class TwoFactorGuard {
  private readonly redis: TwoFactorRedis;

  constructor(
    redis: Redis,
    private readonly now: () => number = Date.now,
    private readonly rule: LockoutRule = LOCKOUT,
  ) {
    redis.defineCommand('totpUseStep', { numberOfKeys: 1, lua: USE_STEP_SCRIPT });
    redis.defineCommand('totpFailure', { numberOfKeys: 2, lua: FAILURE_SCRIPT });
    this.redis = redis as TwoFactorRedis;
  }

  /** Milliseconds the account stays locked; 0 when it is not. */
  async lockedFor(userId: number): Promise<number> {
    const until = Number((await this.redis.get(lockKey(userId))) ?? 0);
    return Math.max(0, until - this.now());
  }

  /**
   * Checks a code against the user's secret: not while locked, only a valid code of a time
   * step not used before. Wrong and replayed codes count towards the lockout unless
   * `countFailures` is false (confirming a new secret, which only its holder knows).
   */
  async check(userId: number, secret: string, code: string, opts: { countFailures?: boolean } = {}): Promise<CodeResult> {
    const countFailures = opts.countFailures ?? true;
    if (countFailures) {
      const waitMs = await this.lockedFor(userId);
      if (waitMs > 0) return { ok: false, reason: 'locked', waitMs };
    }
    const step = await this.validStep(secret, code);
    let result: CodeResult;
    if (step === undefined) result = { ok: false, reason: 'wrong' };
    else if ((await this.redis.totpUseStep(stepKey(userId), step, 4 * TOTP.periodSeconds * 1000)) === 1) result = { ok: true };
    else result = { ok: false, reason: 'replayed' };
    if (!countFailures) return result;
    if (result.ok) await this.redis.del(failuresKey(userId));
    else await this.recordFailure(userId);
    return result;
  }

  private async recordFailure(userId: number): Promise<void> {
    const now = this.now();
    const member = `${now}:${crypto.randomBytes(6).toString('hex')}`;
    const { windowMs, failures, lockMs } = this.rule;
    await this.redis.totpFailure(failuresKey(userId), lockKey(userId), now, member, now - windowMs, failures, now + lockMs, lockMs, windowMs);
  }

  /** The time step the code belongs to, within the allowed drift; undefined when none. */
  private async validStep(secret: string, code: string): Promise<number | undefined> {
    const token = code.replace(/\s+/g, '');
    if (!/^\d{6}$/.test(token)) return undefined;
    const r = await verify({
      secret,
      token,
      epoch: Math.floor(this.now() / 1000),
      epochTolerance: TOTP.toleranceSeconds,
      period: TOTP.periodSeconds,
      digits: TOTP.digits,
    });
    // The functional verify() types HOTP and TOTP results together; a TOTP result has timeStep.
    return r.valid && 'timeStep' in r ? r.timeStep : undefined;
  }
}
