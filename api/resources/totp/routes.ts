// Two-factor authentication with a TOTP app (addendum section 3):
// POST /v1/totp/setup/ {password} -> {secret, otpauth_url}, not active yet;
// POST /v1/totp/confirm/ {code} activates it; POST /v1/totp/disable/ {password, code};
// POST /v1/totp/login/ {challenge_id, code} completes a sign-in that answered 202.
// Code rules (single use per time step, lockout) are in api/auth/two-factor.ts.
import type Router from '@koa/router';
import { newTotpSecret, otpauthUrl } from '../../auth/two-factor.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate, principalOf } from '../../http/auth.ts';
import { badRequest, messageError } from '../../http/errors.ts';
import { validateBody } from '../../http/validate.ts';
import { ACCOUNT_MESSAGES, accountOf, requireCode, requirePassword, throttleAttempt, throttleSignedIn } from '../../auth/account-checks.ts';
import { passwordFingerprint, signIn, type TotpLoginChallenge } from '../../auth/sign-in.ts';
import {
  totpConfirmBody,
  totpDisableBody,
  totpLoginBody,
  totpSetupBody,
  type TotpConfirmBody,
  type TotpDisableBody,
  type TotpLoginBody,
  type TotpSetupBody,
} from './schemas.ts';

export const TOTP_MESSAGES = {
  invalidChallenge: 'This sign-in challenge is invalid or has expired; sign in again.',
  alreadyEnabled: 'Two-factor authentication is already enabled.',
  notEnabled: 'Two-factor authentication is not enabled.',
  noSetup: 'Start two-factor setup first (POST /v1/totp/setup/).',
} as const;

export function totpRoutes(router: Router, deps: ApiDeps): void {
  router.post('/v1/totp/login/', validateBody(totpLoginBody), async (ctx) => {
    const body = ctx.state.body as TotpLoginBody;
    const challenge = await deps.challenges.peek<TotpLoginChallenge>('totp-login', body.challenge_id);
    await throttleAttempt(deps, 'totp-login', ctx.ip, challenge && String(challenge.user_id), 'totpLoginPerAccount', 'totpLoginPerAddress');
    const invalid = () => badRequest({ challenge_id: [TOTP_MESSAGES.invalidChallenge] });
    if (!challenge) throw invalid();

    const user = await deps.users.byId(challenge.user_id);
    const device = user && (await deps.totpDevices.active(user.id));
    if (!user || !user.is_active || !device || passwordFingerprint(user) !== challenge.password) {
      await deps.challenges.consume('totp-login', body.challenge_id);
      throw invalid();
    }
    // A wrong code leaves the challenge usable (the lockout bounds the guesses); the
    // right one uses it up, and only one of concurrent requests gets to.
    await requireCode(deps, user.id, device.secret, body.code);
    if (!(await deps.challenges.consume('totp-login', body.challenge_id))) throw invalid();
    ctx.body = await signIn(deps, user, challenge.remember_me, 'totp');
  });

  router.post(
    '/v1/totp/setup/',
    authenticate(deps),
    throttleSignedIn(deps, 'password-check', 'passwordCheckPerAccount', 'passwordCheckPerAddress'),
    validateBody(totpSetupBody),
    async (ctx) => {
      const user = await accountOf(deps, principalOf(ctx.state).user.id);
      await requirePassword(user, (ctx.state.body as TotpSetupBody).password);
      if (await deps.totpDevices.active(user.id)) throw messageError(TOTP_MESSAGES.alreadyEnabled);
      // A new setup replaces one that was never confirmed.
      const secret = newTotpSecret();
      await deps.totpDevices.save({ userId: user.id, secret, confirmed: false });
      deps.log.info('two-factor setup started', { user_id: user.id });
      ctx.body = { secret, otpauth_url: otpauthUrl(deps.config.webauthnRpName, user.email, secret) };
    },
  );

  router.post('/v1/totp/confirm/', authenticate(deps), validateBody(totpConfirmBody), async (ctx) => {
    const userId = principalOf(ctx.state).user.id;
    const device = await deps.totpDevices.get(userId);
    if (!device) throw messageError(TOTP_MESSAGES.noSetup);
    if (device.confirmed) throw messageError(TOTP_MESSAGES.alreadyEnabled);
    // Only the caller holds this new secret: a wrong code here is a typo, not a guess.
    const r = await deps.twoFactor.check(userId, device.secret, (ctx.state.body as TotpConfirmBody).code, { countFailures: false });
    if (!r.ok) throw messageError(r.reason === 'replayed' ? ACCOUNT_MESSAGES.usedCode : ACCOUNT_MESSAGES.wrongCode);
    await deps.totpDevices.save({ ...device, confirmed: true });
    deps.log.info('two-factor enabled', { user_id: userId });
    ctx.status = 204;
  });

  router.post(
    '/v1/totp/disable/',
    authenticate(deps),
    throttleSignedIn(deps, 'password-check', 'passwordCheckPerAccount', 'passwordCheckPerAddress'),
    validateBody(totpDisableBody),
    async (ctx) => {
      const body = ctx.state.body as TotpDisableBody;
      const user = await accountOf(deps, principalOf(ctx.state).user.id);
      await requirePassword(user, body.password);
      const device = await deps.totpDevices.active(user.id);
      if (!device) throw messageError(TOTP_MESSAGES.notEnabled);
      await requireCode(deps, user.id, device.secret, body.code);
      await deps.totpDevices.remove(user.id);
      deps.log.info('two-factor disabled', { user_id: user.id });
      ctx.status = 204;
    },
  );
}
