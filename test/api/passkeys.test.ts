import { expect } from 'chai';
import { accountApi, enrolTotp, looseLimits, totpCode, type AccountApi } from '../support/account.ts';
import { seed, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';
import { SoftwareAuthenticator } from '../support/webauthn.ts';

const LOGIN_FAILED = { non_field_errors: ['Unable to log in with provided credentials.'] };
const BAD_CEREMONY = { ceremony_id: ['This passkey ceremony is invalid or has expired; start again.'] };

describe('passkeys (WebAuthn)', () => {
  const w = world();
  const email = w.users.maker.email;
  let api: AccountApi;
  const authenticator = () => new SoftwareAuthenticator({ rpId: testStack().config.webauthnRpId, origin: testStack().config.webauthnOrigin });
  const tokenOf = async (email: string) => (await api.call('POST', '/v1/login/', { json: { email, password: w.password } })).body.token as string;

  /** Registration options, then the authenticator's answer: the finishing response. */
  async function register(token: string, device: SoftwareAuthenticator, name?: string) {
    const options = await api.call('POST', '/v1/user/passkeys/options/', { token, json: { password: w.password } });
    expect(options.status).to.equal(200);
    return api.call('POST', '/v1/user/passkeys/', { token, json: { ceremony_id: options.body.ceremony_id, credential: device.register(options.body.public_key), ...(name ? { name } : {}) } });
  }

  async function signIn(device: SoftwareAuthenticator, opts: { email?: string; counter?: number; remember_me?: boolean } = {}) {
    const options = await api.call('POST', '/v1/passkeys/login/options/', { json: opts.email ? { email: opts.email } : {} });
    expect(options.status).to.equal(200);
    const credential = device.assert(options.body.public_key, opts.counter === undefined ? {} : { counter: opts.counter });
    return api.call('POST', '/v1/passkeys/login/', { json: { ceremony_id: options.body.ceremony_id, credential, ...(opts.remember_me ? { remember_me: true } : {}) } });
  }

  before(async () => {
    await seed(w.fixture);
    api = await accountApi();
  });
  after(() => api.close());

  describe('registration', () => {
    it('options need the password and answer {ceremony_id, public_key} with WebAuthn registration options', async () => {
      const token = await tokenOf(w.users.owner.email);
      const missing = await api.call('POST', '/v1/user/passkeys/options/', { token, json: {} });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.equal({ password: ['This field is required.'] });
      const wrong = await api.call('POST', '/v1/user/passkeys/options/', { token, form: { password: 'wrong-password' } });
      expect(wrong.status).to.equal(400);
      expect(wrong.body).to.deep.equal({ password: ['Incorrect password.'] });

      const r = await api.call('POST', '/v1/user/passkeys/options/', { token, form: { password: w.password } });
      expect(r.status).to.equal(200);
      expect(Object.keys(r.body).sort()).to.deep.equal(['ceremony_id', 'public_key']);
      const pk = r.body.public_key;
      expect(pk.rp).to.deep.equal({ name: 'mm-metrics', id: 'localhost' });
      expect(pk.user.name).to.equal(w.users.owner.email);
      expect(pk.challenge).to.match(/^[A-Za-z0-9_-]{20,}$/);
      expect(pk.authenticatorSelection).to.include({ residentKey: 'required', userVerification: 'required' });
      expect(pk.pubKeyCredParams.map((p: { alg: number }) => p.alg)).to.include(-7);
    });

    it('finishes with the authenticator\'s credential: 201 {id, name, created_at}, listed; a ceremony is single-use', async () => {
      const token = await tokenOf(w.users.owner.email);
      const device = authenticator();
      const options = await api.call('POST', '/v1/user/passkeys/options/', { token, json: { password: w.password } });
      const credential = device.register(options.body.public_key);
      const r = await api.call('POST', '/v1/user/passkeys/', { token, json: { ceremony_id: options.body.ceremony_id, credential, name: 'Laptop' } });
      expect(r.status).to.equal(201);
      expect(Object.keys(r.body).sort()).to.deep.equal(['created_at', 'id', 'name']);
      expect(r.body).to.include({ name: 'Laptop' });
      expect(Date.parse(r.body.created_at)).to.equal(api.clock.t);

      const again = await api.call('POST', '/v1/user/passkeys/', { token, json: { ceremony_id: options.body.ceremony_id, credential } });
      expect(again.status).to.equal(400);
      expect(again.body).to.deep.equal(BAD_CEREMONY);

      const list = await api.call('GET', '/v1/user/passkeys/', { token });
      expect(list.status).to.equal(200);
      expect(list.body).to.deep.equal([{ ...r.body, last_used_at: null }]);

      // The same authenticator credential cannot be registered twice.
      const dup = await api.call('POST', '/v1/user/passkeys/options/', { token, json: { password: w.password } });
      expect(dup.body.public_key.excludeCredentials.map((c: { id: string }) => c.id)).to.deep.equal([device.id]);
      const dupFinish = await api.call('POST', '/v1/user/passkeys/', { token, json: { ceremony_id: dup.body.ceremony_id, credential: device.register(dup.body.public_key) } });
      expect(dupFinish.status).to.equal(400);
      expect(dupFinish.body).to.deep.equal({ credential: ['This passkey is already registered.'] });
    });

    it('refuses a credential made for another origin or RP id, or without user verification', async () => {
      const token = await tokenOf(w.users.owner.email);
      for (const over of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { flags: 0x41 }]) {
        const options = await api.call('POST', '/v1/user/passkeys/options/', { token, json: { password: w.password } });
        const r = await api.call('POST', '/v1/user/passkeys/', { token, json: { ceremony_id: options.body.ceremony_id, credential: authenticator().register(options.body.public_key, over) } });
        expect(r.status, JSON.stringify(over)).to.equal(400);
        expect(Object.keys(r.body)).to.deep.equal(['credential']);
        expect(r.body.credential[0]).to.match(/^The passkey could not be verified: /);
      }
    });

    it('refuses a ceremony started by another account', async () => {
      const owner = await tokenOf(w.users.owner.email);
      const options = await api.call('POST', '/v1/user/passkeys/options/', { token: owner, json: { password: w.password } });
      const other = await tokenOf(w.users.staff.email);
      const r = await api.call('POST', '/v1/user/passkeys/', { token: other, json: { ceremony_id: options.body.ceremony_id, credential: authenticator().register(options.body.public_key) } });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal(BAD_CEREMONY);
    });

    it('with two-factor on, the options need a right code ({message} otherwise)', async () => {
      const t = world();
      await seed(t.fixture);
      const token = (await api.call('POST', '/v1/login/', { json: { email: t.users.owner.email, password: t.password } })).body.token;
      const secret = await enrolTotp(api, token, t.password);
      const missing = await api.call('POST', '/v1/user/passkeys/options/', { token, json: { password: t.password } });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.equal({ message: 'A two-factor authentication code is required.' });
      const wrong = await api.call('POST', '/v1/user/passkeys/options/', { token, json: { password: t.password, code: '000000' } });
      expect(wrong.body).to.deep.equal({ message: 'Invalid two-factor authentication code.' });
      const ok = await api.call('POST', '/v1/user/passkeys/options/', { token, json: { password: t.password, code: await totpCode(secret, api.clock.t) } });
      expect(ok.status).to.equal(200);
    });
  });

  describe('sign-in', () => {
    let device: SoftwareAuthenticator;
    before(async () => {
      device = authenticator();
      expect((await register(await tokenOf(email), device, 'Phone')).status).to.equal(201);
    });

    it('with a discoverable passkey (no e-mail) answers the normal login response', async () => {
      const r = await signIn(device);
      expect(r.status).to.equal(200);
      expect(Object.keys(r.body).sort()).to.deep.equal(['expiry', 'token', 'user']);
      expect(r.body.user.email).to.equal(email);
      expect((Date.parse(r.body.expiry) - api.clock.t) / 3_600_000).to.be.within(23.99, 24.01);
      expect((await api.call('GET', '/v1/session/', { token: r.body.token })).status).to.equal(200);
      const listed = (await api.call('GET', '/v1/user/passkeys/', { token: r.body.token })).body;
      expect(Date.parse(listed[0].last_used_at)).to.equal(api.clock.t);
    });

    it('with an e-mail offers that account\'s passkeys; remember_me gives the long token', async () => {
      const options = await api.call('POST', '/v1/passkeys/login/options/', { json: { email } });
      expect(options.status).to.equal(200);
      expect(options.body.public_key.rpId).to.equal('localhost');
      expect(options.body.public_key.userVerification).to.equal('required');
      expect(options.body.public_key.allowCredentials.map((c: { id: string }) => c.id)).to.deep.equal([device.id]);
      const none = await api.call('POST', '/v1/passkeys/login/options/', { json: {} });
      expect(none.body.public_key.allowCredentials ?? []).to.deep.equal([]);
      const r = await signIn(device, { email, remember_me: true });
      expect(r.status).to.equal(200);
      expect((Date.parse(r.body.expiry) - api.clock.t) / 86_400_000).to.be.within(6.99, 7.01);
    });

    it('rejects a signature counter that does not grow', async () => {
      expect((await signIn(device, { counter: 50 })).status).to.equal(200);
      for (const counter of [50, 49, 3]) {
        const r = await signIn(device, { counter });
        expect(r.status, `counter ${counter}`).to.equal(400);
        expect(r.body).to.deep.equal(LOGIN_FAILED);
      }
      expect((await signIn(device, { counter: 51 })).status).to.equal(200);
    });

    it('a ceremony is single-use, and bound to the e-mail it was asked for', async () => {
      const options = await api.call('POST', '/v1/passkeys/login/options/', { json: {} });
      const credential = device.assert(options.body.public_key);
      expect((await api.call('POST', '/v1/passkeys/login/', { json: { ceremony_id: options.body.ceremony_id, credential } })).status).to.equal(200);
      const replay = await api.call('POST', '/v1/passkeys/login/', { json: { ceremony_id: options.body.ceremony_id, credential } });
      expect(replay.status).to.equal(400);
      expect(replay.body).to.deep.equal(BAD_CEREMONY);

      // A ceremony for the owner's account cannot be answered with the maker's passkey.
      expect((await register(await tokenOf(w.users.owner.email), authenticator())).status).to.equal(201);
      const forOwner = await api.call('POST', '/v1/passkeys/login/options/', { json: { email: w.users.owner.email } });
      const r = await api.call('POST', '/v1/passkeys/login/', { json: { ceremony_id: forOwner.body.ceremony_id, credential: device.assert(forOwner.body.public_key) } });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal(LOGIN_FAILED);
    });

    it('refuses an assertion for another origin, an unknown passkey and an expired ceremony', async () => {
      const options = await api.call('POST', '/v1/passkeys/login/options/', { json: {} });
      const wrongOrigin = await api.call('POST', '/v1/passkeys/login/', { json: { ceremony_id: options.body.ceremony_id, credential: device.assert(options.body.public_key, { origin: 'https://evil.example' }) } });
      expect(wrongOrigin.body).to.deep.equal(LOGIN_FAILED);
      const unknown = await api.call('POST', '/v1/passkeys/login/options/', { json: {} });
      const stranger = await api.call('POST', '/v1/passkeys/login/', { json: { ceremony_id: unknown.body.ceremony_id, credential: authenticator().assert(unknown.body.public_key) } });
      expect(stranger.body).to.deep.equal(LOGIN_FAILED);
      const late = await api.call('POST', '/v1/passkeys/login/options/', { json: {} });
      api.clock.advance(5 * 60_000 + 1_000);
      const r = await api.call('POST', '/v1/passkeys/login/', { json: { ceremony_id: late.body.ceremony_id, credential: device.assert(late.body.public_key) } });
      expect(r.body).to.deep.equal(BAD_CEREMONY);
      const missing = await api.call('POST', '/v1/passkeys/login/', { json: {} });
      expect(missing.body).to.deep.equal({ ceremony_id: ['This field is required.'], credential: ['This field is required.'] });
    });

    it('a removed passkey no longer signs in; another account\'s passkey is not found', async () => {
      const t = world();
      await seed(t.fixture);
      const own = authenticator();
      const token = (await api.call('POST', '/v1/login/', { json: { email: t.users.owner.email, password: t.password } })).body.token;
      const options = await api.call('POST', '/v1/user/passkeys/options/', { token, json: { password: t.password } });
      const created = await api.call('POST', '/v1/user/passkeys/', { token, json: { ceremony_id: options.body.ceremony_id, credential: own.register(options.body.public_key) } });
      expect(created.body.name).to.equal('Passkey');
      expect((await signIn(own)).status).to.equal(200);

      const notMine = await api.call('DELETE', `/v1/user/passkeys/${created.body.id}/`, { token: await tokenOf(email) });
      expect(notMine.status).to.equal(404);
      expect(notMine.body).to.deep.equal({ detail: 'Not found.' });
      expect((await api.call('DELETE', `/v1/user/passkeys/${created.body.id}/`, { token })).status).to.equal(204);
      expect((await api.call('GET', '/v1/user/passkeys/', { token })).body).to.deep.equal([]);
      expect((await signIn(own)).body).to.deep.equal(LOGIN_FAILED);
    });
  });

  describe('throttle', () => {
    it('limits sign-in options per client address and per e-mail', async () => {
      const limited = await accountApi({
        limits: looseLimits({ passkeyOptionsPerAddress: { limit: 3, windowMs: 60_000 }, passkeyOptionsPerAccount: { limit: 2, windowMs: 60_000 } }),
      });
      try {
        const options = (json: object) => limited.call('POST', '/v1/passkeys/login/options/', { json });
        expect((await options({ email })).status).to.equal(200);
        expect((await options({ email: email.toUpperCase() })).status).to.equal(200);
        const perAccount = await options({ email });
        expect(perAccount.status).to.equal(429);
        expect(perAccount.body.detail).to.match(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
        expect((await options({})).status).to.equal(429); // the 4th from this address
      } finally {
        await limited.close();
      }
    });
  });
});
