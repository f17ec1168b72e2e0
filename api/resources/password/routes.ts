// POST /v1/user/password/ {old_password, new_password} (addendum section 3): verifies the
// old password, checks the new one (rules.ts), stores its argon2id hash and revokes every
// other token of the account; the token that made the request stays valid.
import type Router from '@koa/router';
import { hashPassword } from '../../../domain/accounts/passwords.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate, principalOf } from '../../http/auth.ts';
import { badRequest } from '../../http/errors.ts';
import { validateBody } from '../../http/validate.ts';
import { accountOf, requirePassword, throttleSignedIn } from '../../auth/account-checks.ts';
import { passwordProblems } from './rules.ts';
import { passwordChangeBody, type PasswordChangeBody } from './schemas.ts';

export function passwordRoutes(router: Router, deps: ApiDeps): void {
  router.post(
    '/v1/user/password/',
    authenticate(deps),
    throttleSignedIn(deps, 'password-check', 'passwordCheckPerAccount', 'passwordCheckPerAddress'),
    validateBody(passwordChangeBody),
    async (ctx) => {
      const body = ctx.state.body as PasswordChangeBody;
      const p = principalOf(ctx.state);
      const user = await accountOf(deps, p.user.id);
      await requirePassword(user, body.old_password, 'old_password');
      const problems = passwordProblems(body.new_password, user, body.old_password);
      if (problems.length) throw badRequest({ new_password: problems });
      await deps.users.setPasswordHash(user.id, await hashPassword(body.new_password));
      const revoked = await deps.tokens.revokeAll(user.id, p.tokenDigest);
      deps.log.info('password changed', { user_id: user.id, tokens_revoked: revoked });
      ctx.status = 204;
    },
  );
}
