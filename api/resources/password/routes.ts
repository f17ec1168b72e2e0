// POST /v1/user/password/ {old_password, new_password} (addendum section 3): verifies the
// old password, checks the new one (rules.ts), stores its argon2id hash and revokes every
// other token of the account; the token that made the request stays valid.
import type { BodyOf, Handlers } from '../../http/contract.ts';
import { hashPassword } from '../../../domain/accounts/passwords.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { badRequest } from '../../http/errors.ts';
import { accountOf, requirePassword, throttleSignedIn } from '../../auth/account-checks.ts';
import { passwordProblems } from './rules.ts';

export function passwordHandlers(deps: ApiDeps): Handlers {
  return {
    changePassword: [throttleSignedIn(deps, 'password-check', 'passwordCheckPerAccount', 'passwordCheckPerAddress'), async (ctx) => {
        const body = ctx.state.body as BodyOf<'changePassword'>;
        const p = principalOf(ctx.state);
        const user = await accountOf(deps, p.user.id);
        await requirePassword(user, body.old_password, 'old_password');
        const problems = passwordProblems(body.new_password, user, body.old_password);
        if (problems.length) throw badRequest({ new_password: problems });
        await deps.users.setPasswordHash(user.id, await hashPassword(body.new_password));
        const revoked = await deps.tokens.revokeAll(user.id, p.tokenDigest);
        deps.log.info('password changed', { user_id: user.id, tokens_revoked: revoked });
        ctx.status = 204;
      }],
  };
}
