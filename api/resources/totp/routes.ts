// Two-factor authentication with a TOTP app (addendum section 3):
// GET /v1/totp/ -> {enabled} (beyond the specification: what the web app's Account shows);
// POST /v1/totp/setup/ {password} -> {secret, otpauth_url}, not active yet;
// POST /v1/totp/confirm/ {code} activates it; POST /v1/totp/disable/ {password, code};
// POST /v1/totp/login/ {challenge_id, code} completes a sign-in that answered 202.
// Code rules (single use per time step, lockout) are in api/auth/two-factor.ts.
import type { BodyOf, Handlers } from '../../http/contract.ts';
import { newTotpSecret, otpauthUrl } from '../../auth/two-factor.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { badRequest, messageError } from '../../http/errors.ts';
import { ACCOUNT_MESSAGES, accountOf, requireCode, requirePassword, throttleAttempt, throttleSignedIn } from '../../auth/account-checks.ts';
import { passwordFingerprint, signIn, type TotpLoginChallenge } from '../../auth/sign-in.ts';

export const TOTP_MESSAGES = {
  invalidChallenge: 'This sign-in challenge is invalid or has expired; sign in again.',
  alreadyEnabled: 'Two-factor authentication is already enabled.',
  notEnabled: 'Two-factor authentication is not enabled.',
  noSetup: 'Start two-factor setup first (POST /v1/totp/setup/).',
} as const;

export function totpHandlers(deps: ApiDeps): Handlers {
  return {
    totpLogin: async (ctx) => {
      const body = ctx.state.body as BodyOf<'totpLogin'>;
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
    },

    totpStatus: async (ctx) => {
      ctx.body = { enabled: (await deps.totpDevices.active(principalOf(ctx.state).user.id)) !== undefined };
    },

    totpSetup: [throttleSignedIn(deps, 'password-check', 'passwordCheckPerAccount', 'passwordCheckPerAddress'), async (ctx) => {
        const user = await accountOf(deps, principalOf(ctx.state).user.id);
        await requirePassword(user, (ctx.state.body as BodyOf<'totpSetup'>).password);
        if (await deps.totpDevices.active(user.id)) throw messageError(TOTP_MESSAGES.alreadyEnabled);
        // A new setup replaces one that was never confirmed.
        const secret = newTotpSecret();
        await deps.totpDevices.save({ userId: user.id, secret, confirmed: false });
        deps.log.info('two-factor setup started', { user_id: user.id });
        ctx.body = { secret, otpauth_url: otpauthUrl(deps.config.webauthnRpName, user.email, secret) };
      }],

    totpConfirm: async (ctx) => {
      const userId = principalOf(ctx.state).user.id;
      const device = await deps.totpDevices.get(userId);
      if (!device) throw messageError(TOTP_MESSAGES.noSetup);
      if (device.confirmed) throw messageError(TOTP_MESSAGES.alreadyEnabled);
      // Only the caller holds this new secret: a wrong code here is a typo, not a guess.
      const r = await deps.twoFactor.check(userId, device.secret, (ctx.state.body as BodyOf<'totpConfirm'>).code, { countFailures: false });
      if (!r.ok) throw messageError(r.reason === 'replayed' ? ACCOUNT_MESSAGES.usedCode : ACCOUNT_MESSAGES.wrongCode);
      await deps.totpDevices.save({ ...device, confirmed: true });
      deps.log.info('two-factor enabled', { user_id: userId });
      ctx.status = 204;
    },

    totpDisable: [throttleSignedIn(deps, 'password-check', 'passwordCheckPerAccount', 'passwordCheckPerAddress'), async (ctx) => {
        const body = ctx.state.body as BodyOf<'totpDisable'>;
        const user = await accountOf(deps, principalOf(ctx.state).user.id);
        await requirePassword(user, body.password);
        const device = await deps.totpDevices.active(user.id);
        if (!device) throw messageError(TOTP_MESSAGES.notEnabled);
        await requireCode(deps, user.id, device.secret, body.code);
        await deps.totpDevices.remove(user.id);
        deps.log.info('two-factor disabled', { user_id: user.id });
        ctx.status = 204;
      }],
  };
}
