// Helpers for the account-security tests: a second API on the running service with a clock
// the test moves and limits of its own, TOTP codes, enrolment, API keys.
import { Redis } from 'ioredis';
import crypto from 'node:crypto';
import { generate } from 'otplib';
import { ChallengeStore } from '../../api/auth/challenges.ts';
import { TokenStore } from '../../api/auth/tokens.ts';
import { TwoFactorGuard } from '../../api/auth/two-factor.ts';
import { DEFAULT_LIMITS, type ThrottleLimits } from '../../api/deps.ts';
import { Throttle, type Limit } from '../../api/http/throttle.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { call } from './helpers.ts';
import { testStack } from './stack.ts';

export class Clock {
  constructor(public t = Date.now()) {}
  readonly now = () => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

const LOOSE: Limit = { limit: 10_000, windowMs: 60_000 };

/** Every throttle out of the way, except those given. */
export function looseLimits(over: Partial<ThrottleLimits> = {}): ThrottleLimits {
  const all = Object.fromEntries(Object.keys(DEFAULT_LIMITS).map((k) => [k, LOOSE])) as unknown as ThrottleLimits;
  return { ...all, ...over };
}

export interface AccountApi extends RunningApi {
  clock: Clock;
  /** helpers.call against this API. */
  call: typeof call;
}

/**
 * A second API on the test service whose account-security clock is `clock`. Its throttle
 * counters live apart, so its requests never count against the shared service's limits.
 */
export async function accountApi(opts: { clock?: Clock; limits?: ThrottleLimits } = {}): Promise<AccountApi> {
  const clock = opts.clock ?? new Clock();
  const deps = testStack().service.deps;
  const throttleRedis = new Redis(testStack().config.redisUrl, { keyPrefix: `mmtest:throttle-${crypto.randomBytes(4).toString('hex')}:` });
  const api = await startApi(
    {
      ...deps,
      limits: opts.limits ?? looseLimits(),
      throttle: new Throttle(throttleRedis),
      now: clock.now,
      tokens: new TokenStore(deps.redis, clock.now),
      challenges: new ChallengeStore(deps.redis, clock.now),
      twoFactor: new TwoFactorGuard(deps.redis, clock.now),
    },
    '127.0.0.1',
    0,
  );
  const callHere = ((method: string, path: string, o: Parameters<typeof call>[2] = {}) => call(method, path, { ...o, baseUrl: api.url })) as typeof call;
  const close = async () => {
    await api.close();
    throttleRedis.disconnect();
  };
  return { ...api, close, clock, call: callHere };
}

/** The code an authenticator app shows at `ms`. */
export const totpCode = (secret: string, ms: number) => generate({ secret, epoch: Math.floor(ms / 1000) });

/** Turns two-factor on for the account of `token`; returns the secret. */
export async function enrolTotp(api: AccountApi, token: string, password: string): Promise<string> {
  const setup = await api.call('POST', '/v1/totp/setup/', { token, json: { password } });
  if (setup.status !== 200) throw new Error(`setup failed: ${setup.status} ${setup.text}`);
  const confirm = await api.call('POST', '/v1/totp/confirm/', { token, json: { code: await totpCode(setup.body.secret, api.clock.t) } });
  if (confirm.status !== 204) throw new Error(`confirm failed: ${confirm.status} ${confirm.text}`);
  // The confirming code's time step is used up: later codes come from the next step.
  api.clock.advance(30_000);
  return setup.body.secret as string;
}
