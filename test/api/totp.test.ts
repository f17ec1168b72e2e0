import { expect } from 'chai';
import { accountApi, enrolTotp, looseLimits, totpCode, type AccountApi } from '../support/account.ts';
import { seed, world } from '../support/helpers.ts';

const WRONG_CODE = { message: 'Invalid two-factor authentication code.' };
const USED_CODE = { message: 'This two-factor authentication code was already used; wait for the next one.' };
const BAD_CHALLENGE = { challenge_id: ['This sign-in challenge is invalid or has expired; sign in again.'] };
const LOCKED = /^Too many wrong two-factor authentication codes\. The account is locked; try again in \d+ minutes?\.$/;

describe('two-factor authentication (TOTP)', () => {
  const w = world();
  let api: AccountApi;

  const loginAs = (email: string, extra: object = {}) => api.call('POST', '/v1/login/', { json: { email, password: w.password, ...extra } });
  const tokenOf = async (email: string) => {
    const r = await loginAs(email);
    expect(r.status).to.equal(200);
    return r.body.token as string;
  };
  const enabled = async (token: string) => {
    const r = await api.call('GET', '/v1/totp/', { token });
    expect(r.status).to.equal(200);
    return r.body.enabled as boolean;
  };

  before(async () => {
    await seed(w.fixture);
    api = await accountApi();
  });
  after(() => api.close());

  describe('enrolment', () => {
    it('setup needs the password and answers the secret and an otpauth URL, not active yet', async () => {
      const token = await tokenOf(w.users.owner.email);
      const missing = await api.call('POST', '/v1/totp/setup/', { token, json: {} });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.equal({ password: ['This field is required.'] });
      const wrong = await api.call('POST', '/v1/totp/setup/', { token, json: { password: 'not-the-password' } });
      expect(wrong.status).to.equal(400);
      expect(wrong.body).to.deep.equal({ password: ['Incorrect password.'] });

      const r = await api.call('POST', '/v1/totp/setup/', { token, form: { password: w.password } });
      expect(r.status).to.equal(200);
      expect(Object.keys(r.body).sort()).to.deep.equal(['otpauth_url', 'secret']);
      expect(r.body.secret).to.match(/^[A-Z2-7]{32}$/);
      const url = new URL(r.body.otpauth_url);
      expect(url.protocol).to.equal('otpauth:');
      expect(url.searchParams.get('secret')).to.equal(r.body.secret);
      expect(url.searchParams.get('issuer')).to.equal('mm-metrics');
      expect(decodeURIComponent(url.pathname)).to.contain(w.users.owner.email);
      // Not confirmed: sign-in still needs only the password, and two-factor reads as off.
      expect((await loginAs(w.users.owner.email)).status).to.equal(200);
      expect(await enabled(token)).to.equal(false);
    });

    it('confirm activates it with a current code; a wrong one changes nothing', async () => {
      const token = await tokenOf(w.users.owner.email);
      const noSetup = await api.call('POST', '/v1/totp/confirm/', { token: await tokenOf(w.users.staff.email), json: { code: '123456' } });
      expect(noSetup.status).to.equal(400);
      expect(noSetup.body).to.have.keys('message');

      const { body } = await api.call('POST', '/v1/totp/setup/', { token, json: { password: w.password } });
      const wrong = await api.call('POST', '/v1/totp/confirm/', { token, json: { code: '000000' } });
      expect(wrong.status).to.equal(400);
      expect(wrong.body).to.deep.equal(WRONG_CODE);
      expect((await loginAs(w.users.owner.email)).status).to.equal(200);

      const ok = await api.call('POST', '/v1/totp/confirm/', { token, json: { code: await totpCode(body.secret, api.clock.t) } });
      expect(ok.status).to.equal(204);
      // On for this account only.
      expect(await enabled(token)).to.equal(true);
      expect(await enabled(await tokenOf(w.users.maker.email))).to.equal(false);
      expect((await api.call('GET', '/v1/totp/', {})).status).to.equal(401);
      const r = await loginAs(w.users.owner.email);
      expect(r.status).to.equal(202);
      expect(Object.keys(r.body).sort()).to.deep.equal(['challenge_id', 'two_factor_required']);
      expect(r.body.two_factor_required).to.equal(true);
      expect(r.body.challenge_id).to.be.a('string');

      const again = await api.call('POST', '/v1/totp/setup/', { token, json: { password: w.password } });
      expect(again.status).to.equal(400);
      expect(again.body).to.deep.equal({ message: 'Two-factor authentication is already enabled.' });
    });
  });

  describe('sign-in with a code', () => {
    const email = w.users.maker.email;
    let secret: string;
    before(async () => {
      secret = await enrolTotp(api, await tokenOf(email), w.password);
    });

    it('a correct password answers 202 with a challenge; the code completes the normal login response', async () => {
      const first = await loginAs(email);
      expect(first.status).to.equal(202);
      const r = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: first.body.challenge_id, code: await totpCode(secret, api.clock.t) } });
      expect(r.status).to.equal(200);
      expect(Object.keys(r.body).sort()).to.deep.equal(['expiry', 'token', 'user']);
      expect(r.body.user.email).to.equal(email);
      const hours = (Date.parse(r.body.expiry) - api.clock.t) / 3_600_000;
      expect(hours).to.be.within(23.99, 24.01);
      const session = await api.call('GET', '/v1/session/', { token: r.body.token });
      expect(session.status).to.equal(200);
      // A wrong password is still a plain login failure.
      const wrong = await api.call('POST', '/v1/login/', { json: { email, password: 'wrong-password' } });
      expect(wrong.status).to.equal(400);
      expect(wrong.body).to.deep.equal({ non_field_errors: ['Unable to log in with provided credentials.'] });
    });

    it('honours the remember_me given at login', async () => {
      api.clock.advance(30_000);
      const first = await loginAs(email, { remember_me: true });
      const r = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: first.body.challenge_id, code: await totpCode(secret, api.clock.t) } });
      expect(r.status).to.equal(200);
      expect((Date.parse(r.body.expiry) - api.clock.t) / 86_400_000).to.be.within(6.99, 7.01);
    });

    it('answers 400 under code for a missing code, {message} for a wrong one, and keeps the challenge for a retry', async () => {
      api.clock.advance(30_000);
      const { body } = await loginAs(email);
      const missing = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: body.challenge_id } });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.equal({ code: ['This field is required.'] });
      for (const code of ['000000', 'abcdef', '12345']) {
        const wrong = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: body.challenge_id, code } });
        expect(wrong.status).to.equal(400);
        expect(wrong.body).to.deep.equal(WRONG_CODE);
      }
      const ok = await api.call('POST', '/v1/totp/login/', { form: { challenge_id: body.challenge_id, code: await totpCode(secret, api.clock.t) } });
      expect(ok.status).to.equal(200);
    });

    it('rejects a code replayed within its window, accepts the next one', async () => {
      api.clock.advance(30_000);
      const code = await totpCode(secret, api.clock.t);
      const a = await loginAs(email);
      expect((await api.call('POST', '/v1/totp/login/', { json: { challenge_id: a.body.challenge_id, code } })).status).to.equal(200);
      const b = await loginAs(email);
      api.clock.advance(10_000); // still inside the window that accepts the code
      const replay = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: b.body.challenge_id, code } });
      expect(replay.status).to.equal(400);
      expect(replay.body).to.deep.equal(USED_CODE);
      api.clock.advance(30_000);
      const next = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: b.body.challenge_id, code: await totpCode(secret, api.clock.t) } });
      expect(next.status).to.equal(200);
    });

    it('a challenge is single-use', async () => {
      api.clock.advance(30_000);
      const { body } = await loginAs(email);
      expect((await api.call('POST', '/v1/totp/login/', { json: { challenge_id: body.challenge_id, code: await totpCode(secret, api.clock.t) } })).status).to.equal(200);
      api.clock.advance(30_000);
      const reuse = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: body.challenge_id, code: await totpCode(secret, api.clock.t) } });
      expect(reuse.status).to.equal(400);
      expect(reuse.body).to.deep.equal(BAD_CHALLENGE);
    });

    it('of concurrent completions of one challenge, one signs in', async () => {
      api.clock.advance(30_000);
      const { body } = await loginAs(email);
      const codes = [await totpCode(secret, api.clock.t - 30_000), await totpCode(secret, api.clock.t)];
      const results = await Promise.all(codes.map((code) => api.call('POST', '/v1/totp/login/', { json: { challenge_id: body.challenge_id, code } })));
      expect(results.filter((r) => r.status === 200)).to.have.length(1);
    });

    it('a challenge expires after 5 minutes; an unknown one is refused', async () => {
      api.clock.advance(30_000);
      const { body } = await loginAs(email);
      api.clock.advance(5 * 60_000 + 1_000);
      const late = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: body.challenge_id, code: await totpCode(secret, api.clock.t) } });
      expect(late.status).to.equal(400);
      expect(late.body).to.deep.equal(BAD_CHALLENGE);
      const unknown = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: 'x'.repeat(43), code: '123456' } });
      expect(unknown.body).to.deep.equal(BAD_CHALLENGE);
    });
  });

  describe('lockout', () => {
    const email = w.users.loner.email;
    let secret: string;
    before(async () => {
      secret = await enrolTotp(api, await tokenOf(email), w.password);
    });

    it('5 wrong codes within 15 minutes lock the account for 15 minutes', async () => {
      const { body } = await loginAs(email);
      for (let i = 0; i < 5; i++) {
        api.clock.advance(30_000);
        const r = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: body.challenge_id, code: '000000' } });
        expect(r.status, `attempt ${i + 1}`).to.equal(400);
        expect(r.body).to.deep.equal(WRONG_CODE);
      }
      // Locked: the right code, and the right password, get 429 {message}.
      const code = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: body.challenge_id, code: await totpCode(secret, api.clock.t) } });
      expect(code.status).to.equal(429);
      expect(Object.keys(code.body)).to.deep.equal(['message']);
      expect(code.body.message).to.match(LOCKED);
      const login = await loginAs(email);
      expect(login.status).to.equal(429);
      expect(Object.keys(login.body)).to.deep.equal(['message']);
      expect(login.body.message).to.match(LOCKED);
      expect(Number(login.headers.get('retry-after'))).to.be.within(14 * 60, 15 * 60);
      // A wrong password tells nothing about the lock.
      expect((await api.call('POST', '/v1/login/', { json: { email, password: 'wrong-password' } })).status).to.equal(400);

      api.clock.advance(14 * 60_000);
      expect((await loginAs(email)).status).to.equal(429);
      api.clock.advance(60_000 + 1_000);
      const after = await loginAs(email);
      expect(after.status).to.equal(202);
      const ok = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: after.body.challenge_id, code: await totpCode(secret, api.clock.t) } });
      expect(ok.status).to.equal(200);
    });

    it('wrong codes spread over more than 15 minutes do not lock', async () => {
      // 4 minutes apart: never more than 4 within any 15 minutes.
      for (let i = 0; i < 8; i++) {
        api.clock.advance(4 * 60_000);
        const fresh = await loginAs(email);
        expect(fresh.status, `login ${i + 1}`).to.equal(202);
        const r = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: fresh.body.challenge_id, code: '000000' } });
        expect(r.status, `attempt ${i + 1}`).to.equal(400);
      }
      api.clock.advance(4 * 60_000);
      const ok = await loginAs(email);
      expect(ok.status).to.equal(202);
      expect((await api.call('POST', '/v1/totp/login/', { json: { challenge_id: ok.body.challenge_id, code: await totpCode(secret, api.clock.t) } })).status).to.equal(200);
    });
  });

  describe('disable', () => {
    it('needs the password and a current code; then sign-in needs only the password', async () => {
      const email = w.users.staff.email;
      const secret = await enrolTotp(api, await tokenOf(email), w.password);
      const first = await loginAs(email);
      const token = (await api.call('POST', '/v1/totp/login/', { json: { challenge_id: first.body.challenge_id, code: await totpCode(secret, api.clock.t) } })).body.token;
      api.clock.advance(30_000);

      const missing = await api.call('POST', '/v1/totp/disable/', { token, json: { password: w.password } });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.equal({ code: ['This field is required.'] });
      const badPassword = await api.call('POST', '/v1/totp/disable/', { token, json: { password: 'nope-nope-nope', code: await totpCode(secret, api.clock.t) } });
      expect(badPassword.body).to.deep.equal({ password: ['Incorrect password.'] });
      const wrong = await api.call('POST', '/v1/totp/disable/', { token, json: { password: w.password, code: '000000' } });
      expect(wrong.status).to.equal(400);
      expect(wrong.body).to.deep.equal(WRONG_CODE);
      const ok = await api.call('POST', '/v1/totp/disable/', { token, json: { password: w.password, code: await totpCode(secret, api.clock.t) } });
      expect(ok.status).to.equal(204);
      expect((await loginAs(email)).status).to.equal(200);
      expect(await enabled(token)).to.equal(false);
      const again = await api.call('POST', '/v1/totp/disable/', { token, json: { password: w.password, code: '123456' } });
      expect(again.body).to.deep.equal({ message: 'Two-factor authentication is not enabled.' });
    });
  });

  describe('throttle', () => {
    it('limits two-factor sign-in attempts per account with the 429 {detail} shape', async () => {
      const t = world();
      await seed(t.fixture);
      const limited = await accountApi({ limits: looseLimits({ totpLoginPerAccount: { limit: 2, windowMs: 60_000 } }) });
      try {
        const token = (await limited.call('POST', '/v1/login/', { json: { email: t.users.owner.email, password: t.password } })).body.token;
        await enrolTotp(limited, token, t.password);
        const { body } = await limited.call('POST', '/v1/login/', { json: { email: t.users.owner.email, password: t.password } });
        const attempt = () => limited.call('POST', '/v1/totp/login/', { json: { challenge_id: body.challenge_id, code: '000000' } });
        expect((await attempt()).status).to.equal(400);
        expect((await attempt()).status).to.equal(400);
        const r = await attempt();
        expect(r.status).to.equal(429);
        expect(r.body.detail).to.match(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
      } finally {
        await limited.close();
      }
    });
  });
});
