import { expect } from 'chai';
import { passwordProblems } from '../../api/resources/password/rules.ts';
import { accountApi, enrolTotp, looseLimits, totpCode, type AccountApi } from '../support/account.ts';
import { seed, world } from '../support/helpers.ts';

describe('password change (POST /v1/user/password/)', () => {
  const w = world();
  let api: AccountApi;
  const login = (email: string, password: string) => api.call('POST', '/v1/login/', { json: { email, password } });
  const tokenOf = async (email: string, password = w.password) => {
    const r = await login(email, password);
    expect(r.status, r.text).to.equal(200);
    return r.body.token as string;
  };

  before(async () => {
    await seed(w.fixture);
    api = await accountApi();
  });
  after(() => api.close());

  it('needs both fields and the right old password (400 under old_password)', async () => {
    const token = await tokenOf(w.users.owner.email);
    const missing = await api.call('POST', '/v1/user/password/', { token, json: {} });
    expect(missing.status).to.equal(400);
    expect(missing.body).to.deep.equal({ old_password: ['This field is required.'], new_password: ['This field is required.'] });
    const wrong = await api.call('POST', '/v1/user/password/', { token, json: { old_password: 'wrong-password', new_password: 'a-much-better-one-42' } });
    expect(wrong.status).to.equal(400);
    expect(wrong.body).to.deep.equal({ old_password: ['Incorrect password.'] });
  });

  it('rejects weak new passwords under new_password, saying why', async () => {
    const token = await tokenOf(w.users.owner.email);
    const cases: [string, string][] = [
      ['short-1', 'This password is too short. It must contain at least 10 characters.'],
      ['12345678901', 'This password is entirely numeric.'],
      [w.users.owner.email.toUpperCase(), 'This password is too similar to your e-mail address or username.'],
      [w.users.owner.username, 'This password is too similar to your e-mail address or username.'],
      ['Password123', 'This password is too common.'],
      [w.password, 'The new password must differ from the old one.'],
    ];
    for (const [new_password, message] of cases) {
      const r = await api.call('POST', '/v1/user/password/', { token, json: { old_password: w.password, new_password } });
      expect(r.status, new_password).to.equal(400);
      expect(Object.keys(r.body)).to.deep.equal(['new_password']);
      expect(r.body.new_password, new_password).to.include(message);
    }
    expect((await login(w.users.owner.email, w.password)).status).to.equal(200);
  });

  it('stores the new password and revokes every other token, keeping the current one', async () => {
    const email = w.users.maker.email;
    const current = await tokenOf(email);
    const others = [await tokenOf(email), await tokenOf(email)];
    const stranger = await tokenOf(w.users.owner.email);
    const r = await api.call('POST', '/v1/user/password/', { token: current, form: { old_password: w.password, new_password: 'a-much-better-one-42' } });
    expect(r.status).to.equal(204);

    expect((await api.call('GET', '/v1/session/', { token: current })).status).to.equal(200);
    for (const token of others) {
      const dead = await api.call('GET', '/v1/session/', { token });
      expect(dead.status).to.equal(401);
      expect(dead.body).to.deep.equal({ detail: 'Invalid token.' });
    }
    expect((await api.call('GET', '/v1/session/', { token: stranger })).status).to.equal(200);
    expect((await login(email, w.password)).body).to.deep.equal({ non_field_errors: ['Unable to log in with provided credentials.'] });
    expect((await login(email, 'a-much-better-one-42')).status).to.equal(200);
  });

  it('voids a two-factor challenge issued before the change', async () => {
    const t = world();
    await seed(t.fixture);
    const email = t.users.owner.email;
    const token = await tokenOf(email, t.password);
    const secret = await enrolTotp(api, token, t.password);
    const pending = await login(email, t.password);
    expect(pending.status).to.equal(202);
    expect((await api.call('POST', '/v1/user/password/', { token, json: { old_password: t.password, new_password: 'another-good-one-77' } })).status).to.equal(204);
    const r = await api.call('POST', '/v1/totp/login/', { json: { challenge_id: pending.body.challenge_id, code: await totpCode(secret, api.clock.t) } });
    expect(r.status).to.equal(400);
    expect(r.body).to.deep.equal({ challenge_id: ['This sign-in challenge is invalid or has expired; sign in again.'] });
  });

  it('is throttled per account', async () => {
    const limited = await accountApi({ limits: looseLimits({ passwordCheckPerAccount: { limit: 2, windowMs: 60_000 } }) });
    try {
      const token = (await limited.call('POST', '/v1/login/', { json: { email: w.users.loner.email, password: w.password } })).body.token;
      const attempt = () => limited.call('POST', '/v1/user/password/', { token, json: { old_password: 'guess-guess-guess', new_password: 'a-much-better-one-42' } });
      expect((await attempt()).status).to.equal(400);
      expect((await attempt()).status).to.equal(400);
      const r = await attempt();
      expect(r.status).to.equal(429);
      expect(r.body.detail).to.match(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
    } finally {
      await limited.close();
    }
  });

  it('passwordProblems: a strong password passes', () => {
    expect(passwordProblems('tidal-orchard-91', { email: 'a@b.example', username: 'a' }, 'old-password-here')).to.deep.equal([]);
    expect(passwordProblems('a-b', { email: 'a@b.example', username: 'a' }, 'x')).to.have.length(1);
  });
});
