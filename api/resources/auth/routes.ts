// POST /v1/login/, POST /v1/logout/, GET /v1/session/ (specification 4.2, addendum 3).
// With two-factor on, a correct password gets 202 and a challenge that
// POST /v1/totp/login/ completes (api/resources/totp/routes.ts).
import type { BodyOf, Handlers } from '../../http/contract.ts';
import { dummyPasswordHash, verifyPassword } from '../../../domain/accounts/passwords.ts';
import { organizationsOf } from '../../../domain/reference/visibility.ts';
import { LOGIN_MESSAGES, passwordFingerprint, signIn, type TotpLoginChallenge } from '../../auth/sign-in.ts';
import type { ApiDeps } from '../../deps.ts';
import { presentUser } from '../../presenters.ts';
import { principalOf, requireUserToken } from '../../http/auth.ts';
import { nonFieldError } from '../../http/errors.ts';
import { refuseWhileLocked } from '../../auth/account-checks.ts';

export function authHandlers(deps: ApiDeps): Handlers {
  return {
    login: async (ctx) => {
      const body = ctx.state.body as BodyOf<'login'>;
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
    },

    logout: [requireUserToken, async (ctx) => {
      const p = principalOf(ctx.state);
      await deps.tokens.revoke(p.tokenDigest!, p.user.id);
      ctx.status = 204;
    }],

    getSession: [requireUserToken, async (ctx) => {
      const p = principalOf(ctx.state);
      const orgs = await organizationsOf(deps, p.user);
      ctx.body = {
        user: presentUser(p.user),
        expiry: p.expiry?.toISOString() ?? null,
        organizations: orgs.map((o) => ({ slug: o.slug, name: o.name })),
        staff: p.user.is_staff,
      };
    }],
  };
}
