// Signing in, shared by every way to do it (password, two-factor code, passkey): the
// token issued, the messages of a failed attempt, what a two-factor challenge remembers.
import crypto from 'node:crypto';
import type { User, UserWithHash } from '../../domain/accounts/users.ts';
import type { ApiDeps } from '../deps.ts';
import { presentUser } from '../presenters.ts';

export const LOGIN_MESSAGES = {
  missing: 'Must include "email" and "password".',
  invalid: 'Unable to log in with provided credentials.',
} as const;

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
