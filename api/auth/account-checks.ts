// Checks shared by the account endpoints (issue 4): per-account and per-address throttles,
// re-entering the password, the two-factor code and the lockout, the id in a path.
import type { Middleware } from 'koa';
import { verifyPassword } from '../../domain/accounts/passwords.ts';
import type { UserWithHash } from '../../domain/accounts/users.ts';
import type { ApiDeps, ThrottleLimits } from '../deps.ts';
import { principalOf } from '../http/auth.ts';
import { badRequest, invalidToken, messageError } from '../http/errors.ts';

export const ACCOUNT_MESSAGES = {
  wrongPassword: 'Incorrect password.',
  codeRequired: 'A two-factor authentication code is required.',
  wrongCode: 'Invalid two-factor authentication code.',
  usedCode: 'This two-factor authentication code was already used; wait for the next one.',
  locked: (waitMs: number) => {
    const minutes = Math.max(1, Math.ceil(waitMs / 60_000));
    return `Too many wrong two-factor authentication codes. The account is locked; try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
  },
} as const;

type LimitName = keyof ThrottleLimits;

/** Counts the attempt against the account and the client address; 429 when over either limit. */
export async function throttleAttempt(deps: ApiDeps, scope: string, address: string, account: string | undefined, perAccount: LimitName, perAddress: LimitName): Promise<void> {
  await deps.throttle.hit([
    { scope: `${scope}:address`, key: address, limit: deps.limits[perAddress] },
    ...(account === undefined ? [] : [{ scope: `${scope}:account`, key: account, limit: deps.limits[perAccount] }]),
  ]);
}

/** The same, as middleware for signed-in routes (after authenticate). */
export function throttleSignedIn(deps: ApiDeps, scope: string, perAccount: LimitName, perAddress: LimitName): Middleware {
  return async (ctx, next) => {
    await throttleAttempt(deps, scope, ctx.ip, String(principalOf(ctx.state).user.id), perAccount, perAddress);
    await next();
  };
}

/** The signed-in user with the password hash, for the checks below. */
export async function accountOf(deps: ApiDeps, userId: number): Promise<UserWithHash> {
  const user = await deps.users.byId(userId);
  if (!user || !user.is_active) throw invalidToken();
  return user;
}

/** 400 under `field` unless `password` is the account's password. */
export async function requirePassword(user: UserWithHash, password: string, field = 'password'): Promise<void> {
  if (!(await verifyPassword(user.password_hash, password))) throw badRequest({ [field]: [ACCOUNT_MESSAGES.wrongPassword] });
}

/** 429 `{message}` while the account is locked by wrong two-factor codes. */
export async function refuseWhileLocked(deps: ApiDeps, userId: number): Promise<void> {
  const waitMs = await deps.twoFactor.lockedFor(userId);
  if (waitMs > 0) throw lockedError(waitMs);
}

/**
 * Checks a two-factor code: 429 `{message}` while locked, 400 `{message}` for a wrong or
 * already used code (counted towards the lockout).
 */
export async function requireCode(deps: ApiDeps, userId: number, secret: string, code: string): Promise<void> {
  const r = await deps.twoFactor.check(userId, secret, code);
  if (r.ok) return;
  if (r.reason === 'locked') throw lockedError(r.waitMs);
  throw messageError(r.reason === 'replayed' ? ACCOUNT_MESSAGES.usedCode : ACCOUNT_MESSAGES.wrongCode);
}

/** When the account has two-factor on, `code` must be given (400 `{message}`) and right. */
export async function requireCodeIfEnrolled(deps: ApiDeps, userId: number, code: string | undefined): Promise<void> {
  const device = await deps.totpDevices.active(userId);
  if (!device) return;
  if (!code) {
    await refuseWhileLocked(deps, userId);
    throw messageError(ACCOUNT_MESSAGES.codeRequired);
  }
  await requireCode(deps, userId, device.secret, code);
}

function lockedError(waitMs: number) {
  return messageError(ACCOUNT_MESSAGES.locked(waitMs), 429, { 'Retry-After': String(Math.ceil(waitMs / 1000)) });
}
