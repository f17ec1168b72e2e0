// Passkeys (WebAuthn, specification 4.4, addendum section 3), verified by @simplewebauthn/server:
// registration  POST /v1/user/passkeys/options/ {password, code?} -> {ceremony_id, public_key}
//               POST /v1/user/passkeys/ {ceremony_id, credential, name?} -> 201 {id, name, created_at}
//               GET /v1/user/passkeys/, DELETE /v1/user/passkeys/<id>/
// sign-in       POST /v1/passkeys/login/options/ {email?} -> {ceremony_id, public_key}
//               POST /v1/passkeys/login/ {ceremony_id, credential, remember_me?} -> the login response
// Ceremonies live 5 minutes in Redis and are used up by the finishing call, whatever its
// outcome. Passkeys must be discoverable and verify the user (PIN, biometrics), so a
// passkey sign-in stands on its own: it asks no password and no TOTP code.
import { pathId, type BodyOf, type Handlers } from '../../http/contract.ts';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Passkey } from '../../../domain/accounts/passkeys.ts';
import { CHALLENGE_TTL_MS } from '../../auth/challenges.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { badRequest, nonFieldError, notFound } from '../../http/errors.ts';
import { accountOf, requireCodeIfEnrolled, requirePassword, throttleAttempt, throttleSignedIn } from '../../auth/account-checks.ts';
import { LOGIN_MESSAGES, signIn } from '../../auth/sign-in.ts';

export const PASSKEY_MESSAGES = {
  invalidCeremony: 'This passkey ceremony is invalid or has expired; start again.',
  notVerified: (reason: string) => `The passkey could not be verified: ${reason}`,
  duplicate: 'This passkey is already registered.',
} as const;

interface RegisterCeremony {
  user_id: number;
  challenge: string;
}

interface LoginCeremony {
  challenge: string;
  /** Set when the options named an account: only its passkeys may answer. */
  user_id?: number;
}

/** The WebAuthn user handle: the account id, which is no personal data. */
const userHandle = (userId: number) => new TextEncoder().encode(`user:${userId}`);
const fromBase64url = (s: string) => new Uint8Array(Buffer.from(s, 'base64url'));

const presentPasskey = (p: Pick<Passkey, 'id' | 'name' | 'createdAt'>) => ({ id: p.id, name: p.name, created_at: new Date(p.createdAt).toISOString() });

export function passkeyHandlers(deps: ApiDeps): Handlers {
  const { webauthnRpId: rpID, webauthnOrigin: origin, webauthnRpName: rpName } = deps.config;

  return {
    passkeyRegistrationOptions: [throttleSignedIn(deps, 'passkey-options', 'passkeyOptionsPerAccount', 'passkeyOptionsPerAddress'), async (ctx) => {
        const body = ctx.state.body as BodyOf<'passkeyRegistrationOptions'>;
        const user = await accountOf(deps, principalOf(ctx.state).user.id);
        await requirePassword(user, body.password);
        await requireCodeIfEnrolled(deps, user.id, body.code);
        const existing = await deps.passkeys.listForUser(user.id);
        const options = await generateRegistrationOptions({
          rpName,
          rpID,
          userName: user.email,
          userDisplayName: `${user.first_name} ${user.last_name}`.trim() || user.username,
          userID: userHandle(user.id),
          timeout: CHALLENGE_TTL_MS,
          attestationType: 'none',
          excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
          authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
        });
        const ceremony: RegisterCeremony = { user_id: user.id, challenge: options.challenge };
        ctx.body = { ceremony_id: await deps.challenges.create('passkey-register', ceremony), public_key: options };
      }],

    registerPasskey: async (ctx) => {
      const body = ctx.state.body as BodyOf<'registerPasskey'>;
      const userId = principalOf(ctx.state).user.id;
      const ceremony = await deps.challenges.take<RegisterCeremony>('passkey-register', body.ceremony_id);
      if (!ceremony || ceremony.user_id !== userId) throw badRequest({ ceremony_id: [PASSKEY_MESSAGES.invalidCeremony] });
      let info;
      try {
        const verification = await verifyRegistrationResponse({
          response: body.credential as unknown as RegistrationResponseJSON,
          expectedChallenge: ceremony.challenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          requireUserVerification: true,
        });
        info = verification.registrationInfo;
      } catch (e) {
        throw badRequest({ credential: [PASSKEY_MESSAGES.notVerified((e as Error).message)] });
      }
      if (!info) throw badRequest({ credential: [PASSKEY_MESSAGES.notVerified('not verified')] });
      if (await deps.passkeys.byCredentialId(info.credential.id)) throw badRequest({ credential: [PASSKEY_MESSAGES.duplicate] });

      const passkey = {
        id: await deps.ids.next('passkeys', await deps.passkeys.maxId()),
        userId,
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
        name: body.name ?? 'Passkey',
        transports: info.credential.transports ?? [],
        createdAt: deps.now(),
      };
      await deps.passkeys.insert(passkey, info.credential.counter);
      deps.log.info('passkey registered', { user_id: userId, passkey_id: passkey.id });
      ctx.status = 201;
      ctx.body = presentPasskey(passkey);
    },

    listPasskeys: async (ctx) => {
      const passkeys = await deps.passkeys.listForUser(principalOf(ctx.state).user.id);
      ctx.body = passkeys.map((p) => ({ ...presentPasskey(p), last_used_at: p.lastUsedAt === null ? null : new Date(p.lastUsedAt).toISOString() }));
    },

    deletePasskey: async (ctx) => {
      const userId = principalOf(ctx.state).user.id;
      const passkey = await deps.passkeys.byIdForUser(pathId(ctx), userId);
      if (!passkey) throw notFound();
      await deps.passkeys.remove(passkey.id, deps.now());
      deps.log.info('passkey removed', { user_id: userId, passkey_id: passkey.id });
      ctx.status = 204;
    },

    passkeyLoginOptions: async (ctx) => {
      const email = (ctx.state.body as BodyOf<'passkeyLoginOptions'>).email?.trim().toLowerCase() || undefined;
      await throttleAttempt(deps, 'passkey-options', ctx.ip, email, 'passkeyOptionsPerAccount', 'passkeyOptionsPerAddress');
      // With an e-mail, the account's passkeys are offered (for authenticators that cannot
      // discover them); without one, or for an address with none, any discoverable passkey.
      let passkeys: Passkey[] = [];
      if (email) {
        const user = await deps.users.byEmail(email);
        if (user?.is_active) passkeys = await deps.passkeys.listForUser(user.id);
      }
      const options = await generateAuthenticationOptions({
        rpID,
        timeout: CHALLENGE_TTL_MS,
        userVerification: 'required',
        ...(passkeys.length ? { allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports })) } : {}),
      });
      const ceremony: LoginCeremony = { challenge: options.challenge, ...(passkeys.length ? { user_id: passkeys[0]!.userId } : {}) };
      ctx.body = { ceremony_id: await deps.challenges.create('passkey-login', ceremony), public_key: options };
    },

    passkeyLogin: async (ctx) => {
      const body = ctx.state.body as BodyOf<'passkeyLogin'>;
      const ceremony = await deps.challenges.take<LoginCeremony>('passkey-login', body.ceremony_id);
      if (!ceremony) throw badRequest({ ceremony_id: [PASSKEY_MESSAGES.invalidCeremony] });
      const response = body.credential as unknown as AuthenticationResponseJSON;
      const failed = () => nonFieldError(LOGIN_MESSAGES.invalid);

      const passkey = await deps.passkeys.byCredentialId(response.id);
      if (!passkey || (ceremony.user_id !== undefined && passkey.userId !== ceremony.user_id)) throw failed();
      const handle = response.response?.userHandle;
      if (handle && handle !== Buffer.from(userHandle(passkey.userId)).toString('base64url')) throw failed();
      const user = await deps.users.byId(passkey.userId);
      if (!user || !user.is_active) throw failed();

      let newCounter: number;
      try {
        const verification = await verifyAuthenticationResponse({
          response,
          expectedChallenge: ceremony.challenge,
          expectedOrigin: origin,
          expectedRPID: rpID,
          credential: { id: passkey.credentialId, publicKey: fromBase64url(passkey.publicKey), counter: passkey.counter, transports: passkey.transports },
          requireUserVerification: true,
        });
        if (!verification.verified) throw new Error('signature not verified');
        newCounter = verification.authenticationInfo.newCounter;
      } catch (e) {
        // A counter that did not grow means a cloned authenticator (or a replay): worth a warning.
        deps.log.warn('passkey sign-in rejected', { user_id: user.id, passkey_id: passkey.id, reason: (e as Error).message });
        throw failed();
      }
      await deps.passkeys.recordUse(passkey.id, newCounter, deps.now());
      ctx.body = await signIn(deps, user, body.remember_me === true, 'passkey');
    },
  };
}
