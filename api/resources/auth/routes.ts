// POST /v1/login/, POST /v1/logout/, GET /v1/session/ (specification 4.2, addendum 3).
// With two-factor on, a correct password gets 202 and a challenge that
// POST /v1/totp/login/ completes (api/resources/totp/routes.ts).
import type Router from '@koa/router';
import crypto from 'node:crypto';
import { dummyPasswordHash, verifyPassword } from '../../../lib/passwords.ts';
import type { User, UserWithHash } from '../../../lib/repositories/users.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate, principalOf, requireUserToken } from '../../http/auth.ts';
import { nonFieldError } from '../../http/errors.ts';
import { validateBody } from '../../http/validate.ts';
import { refuseWhileLocked } from '../account.ts';
import { presentUser } from '../presenters.ts';
import { loginBody, type LoginBody } from './schemas.ts';

export const LOGIN_MESSAGES = {
  missing: 'Must include "email" and "password".',
  invalid: 'Unable to log in with provided credentials.',
} as const;

export function authRoutes(router: Router, deps: ApiDeps): void {
  router.post('/v1/login/', validateBody(loginBody), async (ctx) => {
    const body = ctx.state.body as LoginBody;
    const email = body.email?.trim() ?? '';
    const password = body.password ?? '';
    await deps.throttle.hit([
      { scope: 'login:address', key: ctx.ip, limit: deps.limits.loginPerAddress },
      ...(email ? [{ scope: 'login:account', key: email.toLowerCase(), limit: deps.limits.loginPerAccount }] : []),
    ]);
    if (!email || !password) throw nonFieldError(LOGIN_MESSAGES.missing);

    const user = await deps.users.byEmail(email);
    // Verify against a dummy hash for unknown accounts so the answer takes as long.
    const ok = await verifyPassword(user?.password_hash ?? (await dummyPasswordHash()), password);
    if (!user || !ok || !user.is_active) throw nonFieldError(LOGIN_MESSAGES.invalid);

    if (await deps.totpDevices.active(user.id)) {
      // Only a caller who knows the password learns that the account is locked.
      await refuseWhileLocked(deps, user.id);
      const challenge: TotpLoginChallenge = { user_id: user.id, remember_me: body.remember_me === true, password: passwordFingerprint(user) };
      ctx.status = 202;
      ctx.body = { two_factor_required: true, challenge_id: await deps.challenges.create('totp-login', challenge) };
      return;
    }
    ctx.body = await signIn(deps, user, body.remember_me === true, 'password');
  });

  router.post('/v1/logout/', authenticate(deps), requireUserToken, async (ctx) => {
    const p = principalOf(ctx.state);
    await deps.tokens.revoke(p.tokenDigest!, p.user.id);
    ctx.status = 204;
  });

  router.get('/v1/session/', authenticate(deps), requireUserToken, async (ctx) => {
    const p = principalOf(ctx.state);
    const orgs = await organizationsOf(deps, p.user);
    ctx.body = {
      user: presentUser(p.user),
      expiry: p.expiry?.toISOString() ?? null,
      organizations: orgs.map((o) => ({ slug: o.slug, name: o.name })),
    };
  });
}

/** What a two-factor challenge remembers between POST /v1/login/ and POST /v1/totp/login/. */
export interface TotpLoginChallenge {
  user_id: number;
  remember_me: boolean;
  /** Fingerprint of the password hash at login: a password change voids the challenge. */
  password: string;
}

export const passwordFingerprint = (user: UserWithHash) => crypto.createHash('sha256').update(user.password_hash).digest('base64url').slice(0, 16);

/** Issues a token: the body of every successful sign-in (password, two-factor, passkey). */
export async function signIn(deps: ApiDeps, user: User, rememberMe: boolean, method: 'password' | 'totp' | 'passkey') {
  const issued = await deps.tokens.issue(user.id, rememberMe);
  deps.log.info('login', { user_id: user.id, remember_me: rememberMe, method });
  return { expiry: issued.expiry.toISOString(), token: issued.token, user: presentUser(user) };
}

/** The caller's organizations: memberships, or every organization for staff. */
export async function organizationsOf(deps: ApiDeps, user: User) {
  if (user.is_staff) return deps.reference.organizations();
  const slugs = await deps.users.memberships(user.id);
  return slugs.length ? deps.reference.organizations(slugs) : [];
}
