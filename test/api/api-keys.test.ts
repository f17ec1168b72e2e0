import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { authenticate } from '../../api/http/auth.ts';
import { HttpError } from '../../api/http/errors.ts';
import { accountApi, enrolTotp, looseLimits, totpCode, type AccountApi } from '../support/account.ts';
import { call, seed, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const KEY_FIELDS = ['created_at', 'expires_at', 'id', 'key', 'last_used_at', 'name', 'prefix', 'scopes'];
const LIMIT = { message: 'You already have 20 active API keys; revoke one before creating another.' };
const NOT_ALLOWED = { detail: 'API keys cannot be used for this endpoint.' };
const INVALID = { detail: 'Invalid token.' };
const YEAR_MS = 365 * 86_400_000;

describe('API keys (/v1/user/api-keys/, Authorization: Api-Key)', () => {
  const w = world();
  let api: AccountApi;
  const tokenOf = async (email: string) => (await api.call('POST', '/v1/login/', { json: { email, password: w.password } })).body.token as string;
  const create = (token: string, body: Record<string, unknown>) => api.call('POST', '/v1/user/api-keys/', { token, json: { password: w.password, ...body } });

  before(async () => {
    await seed(w.fixture);
    api = await accountApi();
  });
  after(() => api.close());

  describe('creation', () => {
    it('answers 201 with the API key object and the key, which starts with its prefix', async () => {
      const token = await tokenOf(w.users.owner.email);
      const r = await create(token, { name: 'reader', scopes: ['metrics:read'] });
      expect(r.status).to.equal(201);
      expect(Object.keys(r.body).sort()).to.deep.equal(KEY_FIELDS);
      expect(r.body.id).to.be.a('number');
      expect(r.body).to.include({ name: 'reader', last_used_at: null });
      expect(r.body.scopes).to.deep.equal(['metrics:read']);
      expect(r.body.prefix.length).to.be.at.most(16);
      expect(r.body.key.startsWith(`${r.body.prefix}_`)).to.equal(true);
      expect(r.body.key.length).to.be.greaterThan(64);
      expect(Date.parse(r.body.created_at)).to.equal(api.clock.t);
      expect(Date.parse(r.body.expires_at) - api.clock.t).to.equal(YEAR_MS);
    });

    it('keeps a scope named twice once', async () => {
      const token = await tokenOf(w.users.loner.email);
      const r = await create(token, { name: 'twice', scopes: ['metrics:read', 'metrics:read'] });
      expect([r.status, r.body.scopes]).to.deep.equal([201, ['metrics:read']]);
      const listed = await api.call('GET', '/v1/user/api-keys/', { token });
      expect(listed.body.find((k: { id: number }) => k.id === r.body.id).scopes).to.deep.equal(['metrics:read']);
    });

    it('accepts urlencoded and multipart bodies, scopes as repeated fields or comma-separated', async () => {
      const token = await tokenOf(w.users.owner.email);
      const csv = await api.call('POST', '/v1/user/api-keys/', { token, form: { name: 'csv', password: w.password, scopes: 'metrics:read, reported_metrics:write' } });
      expect(csv.status).to.equal(201);
      expect(csv.body.scopes).to.deep.equal(['metrics:read', 'reported_metrics:write']);
      const repeated = await fetch(`${api.url}/v1/user/api-keys/`, {
        method: 'POST',
        headers: { Authorization: `Token ${token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `name=repeated&password=${encodeURIComponent(w.password)}&scopes=reported_metrics%3Awrite&scopes=metrics%3Aread`,
      });
      expect(repeated.status).to.equal(201);
      expect(((await repeated.json()) as { scopes: string[] }).scopes).to.deep.equal(['reported_metrics:write', 'metrics:read']);
      const form = new FormData();
      form.append('name', 'multipart');
      form.append('password', w.password);
      form.append('scopes', 'metrics:read');
      form.append('scopes', 'reported_metrics:write');
      form.append('expires_at', new Date(api.clock.t + 86_400_000).toISOString());
      const multipart = await fetch(`${api.url}/v1/user/api-keys/`, { method: 'POST', headers: { Authorization: `Token ${token}` }, body: form });
      expect(multipart.status).to.equal(201);
      const body = (await multipart.json()) as { scopes: string[]; expires_at: string };
      expect(body.scopes).to.deep.equal(['metrics:read', 'reported_metrics:write']);
      expect(Date.parse(body.expires_at)).to.equal(api.clock.t + 86_400_000);
    });

    it('validates the fields in the field-error shape', async () => {
      const token = await tokenOf(w.users.owner.email);
      const missing = await api.call('POST', '/v1/user/api-keys/', { token, json: {} });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.equal({ name: ['This field is required.'], password: ['This field is required.'], scopes: ['This field is required.'] });
      const bad = await create(token, { name: 'x'.repeat(101), scopes: ['metrics:write'], code: '1'.repeat(33) });
      expect(bad.status).to.equal(400);
      expect(bad.body).to.deep.equal({
        name: ['Ensure this field has no more than 100 characters.'],
        scopes: ['Not a valid choice; expected one of: metrics:read, reported_metrics:write.'],
        code: ['Ensure this field has no more than 32 characters.'],
      });
      expect((await create(token, { name: 'k', scopes: [] })).body).to.deep.equal({ scopes: ['This list may not be empty.'] });
      // A list in a JSON body is a JSON array (forms may send one comma-separated value).
      expect((await create(token, { name: 'k', scopes: '' })).body).to.deep.equal({ scopes: ['Expected a list of items.'] });
      const past = await create(token, { name: 'k', scopes: ['metrics:read'], expires_at: new Date(api.clock.t - 1000).toISOString() });
      expect(past.body).to.deep.equal({ expires_at: ['Must be in the future.'] });
      const late = await create(token, { name: 'k', scopes: ['metrics:read'], expires_at: new Date(api.clock.t + YEAR_MS + 60_000).toISOString() });
      expect(late.body).to.deep.equal({ expires_at: ['Must be at most one year from now.'] });
    });

    it('verifies the password: a wrong one is 400 under password', async () => {
      const r = await create(await tokenOf(w.users.owner.email), { name: 'k', scopes: ['metrics:read'], password: 'wrong-password' });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({ password: ['Incorrect password.'] });
    });

    it('with two-factor on, needs a right code: missing or wrong is 400 {message}', async () => {
      const t = world();
      await seed(t.fixture);
      const token = (await api.call('POST', '/v1/login/', { json: { email: t.users.owner.email, password: t.password } })).body.token;
      const secret = await enrolTotp(api, token, t.password);
      const post = (body: object) => api.call('POST', '/v1/user/api-keys/', { token, json: { name: 'k', scopes: ['metrics:read'], password: t.password, ...body } });
      const missing = await post({});
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.equal({ message: 'A two-factor authentication code is required.' });
      const wrong = await post({ code: '000000' });
      expect(wrong.status).to.equal(400);
      expect(wrong.body).to.deep.equal({ message: 'Invalid two-factor authentication code.' });
      const ok = await post({ code: await totpCode(secret, api.clock.t) });
      expect(ok.status).to.equal(201);
    });
  });

  describe('listing and revoking', () => {
    it('lists the account\'s keys without secrets; DELETE revokes; another account\'s key is not found', async () => {
      const token = await tokenOf(w.users.maker.email);
      const a = (await create(token, { name: 'a', scopes: ['metrics:read'] })).body;
      const b = (await create(token, { name: 'b', scopes: ['reported_metrics:write'] })).body;
      const list = await api.call('GET', '/v1/user/api-keys/', { token });
      expect(list.status).to.equal(200);
      expect(list.body.map((k: { id: number }) => k.id)).to.deep.equal([a.id, b.id]);
      const { key: _secret, ...shown } = a;
      expect(list.body[0]).to.deep.equal(shown);
      expect(list.text).to.not.contain(a.key.slice(17));

      const other = await tokenOf(w.users.owner.email);
      for (const id of [a.id, 999_999_999, 'abc']) {
        const r = await api.call('DELETE', `/v1/user/api-keys/${id}/`, { token: other });
        expect(r.status).to.equal(404);
        expect(r.body).to.deep.equal({ detail: 'Not found.' });
      }
      expect((await api.call('DELETE', `/v1/user/api-keys/${a.id}/`, { token })).status).to.equal(204);
      expect((await api.call('DELETE', `/v1/user/api-keys/${a.id}/`, { token })).status).to.equal(404);
      const after = await api.call('GET', '/v1/user/api-keys/', { token });
      expect(after.body.map((k: { id: number }) => k.id)).to.deep.equal([b.id]);
    });
  });

  describe('authentication with a key', () => {
    let token: string;
    let reader: { id: number; key: string };
    let writer: { id: number; key: string };
    before(async () => {
      token = await tokenOf(w.users.owner.email);
      reader = (await create(token, { name: 'reader', scopes: ['metrics:read'] })).body;
      writer = (await create(token, { name: 'writer', scopes: ['reported_metrics:write'] })).body;
    });
    const withKey = (key: string) => ({ authorization: `Api-Key ${key}` });

    it('reads GET /v1/organizations/ as its owner (either scope)', async () => {
      const byToken = await api.call('GET', '/v1/organizations/', { token });
      for (const key of [reader.key, writer.key]) {
        const r = await api.call('GET', '/v1/organizations/', withKey(key));
        expect(r.status).to.equal(200);
        expect(r.body).to.deep.equal(byToken.body);
      }
    });

    it('gets 403 on every account endpoint', async () => {
      const endpoints: [string, string][] = [
        ['GET', '/v1/session/'],
        ['POST', '/v1/logout/'],
        ['GET', '/v1/user/api-keys/'],
        ['POST', '/v1/user/api-keys/'],
        ['DELETE', `/v1/user/api-keys/${reader.id}/`],
        ['GET', '/v1/user/passkeys/'],
        ['POST', '/v1/user/passkeys/options/'],
        ['POST', '/v1/user/passkeys/'],
        ['DELETE', '/v1/user/passkeys/1/'],
        ['GET', '/v1/totp/'],
        ['POST', '/v1/totp/setup/'],
        ['POST', '/v1/totp/confirm/'],
        ['POST', '/v1/totp/disable/'],
        ['POST', '/v1/user/password/'],
        ['GET', '/v1/admin/status/'],
      ];
      for (const [method, path] of endpoints) {
        const r = await api.call(method, path, { ...withKey(reader.key), ...(method === 'POST' ? { json: { password: w.password } } : {}) });
        expect(r.status, `${method} ${path}`).to.equal(403);
        expect(r.body, `${method} ${path}`).to.deep.equal(NOT_ALLOWED);
      }
    });

    it('answers 401 for a malformed, unknown, revoked or expired key', async () => {
      // the real key with its last character changed (to another one: it may already be 0)
      const tampered = reader.key.slice(0, -1) + (reader.key.endsWith('0') ? '1' : '0');
      for (const key of ['nope', tampered, `mmk_000000000000_${'0'.repeat(64)}`]) {
        const r = await api.call('GET', '/v1/organizations/', withKey(key));
        expect(r.status, key).to.equal(401);
        expect(r.body).to.deep.equal(INVALID);
      }
      const revoked = (await create(token, { name: 'revoked', scopes: ['metrics:read'] })).body;
      expect((await api.call('GET', '/v1/organizations/', withKey(revoked.key))).status).to.equal(200);
      await api.call('DELETE', `/v1/user/api-keys/${revoked.id}/`, { token });
      expect((await api.call('GET', '/v1/organizations/', withKey(revoked.key))).body).to.deep.equal(INVALID);

      const short = (await create(token, { name: 'short', scopes: ['metrics:read'], expires_at: new Date(api.clock.t + 60_000).toISOString() })).body;
      expect((await api.call('GET', '/v1/organizations/', withKey(short.key))).status).to.equal(200);
      api.clock.advance(61_000);
      const expired = await api.call('GET', '/v1/organizations/', withKey(short.key));
      expect(expired.status).to.equal(401);
      expect(expired.body).to.deep.equal(INVALID);
    });

    it('records last_used_at at most once a minute, and only for requests it let in', async () => {
      const k = (await create(token, { name: 'used', scopes: ['metrics:read'] })).body;
      const lastUsed = async () => (await api.call('GET', '/v1/user/api-keys/', { token })).body.find((x: { id: number }) => x.id === k.id).last_used_at;
      expect((await api.call('GET', '/v1/session/', withKey(k.key))).status).to.equal(403);
      expect(await lastUsed()).to.equal(null);
      api.clock.advance(1_000);
      const firstUse = api.clock.t;
      await api.call('GET', '/v1/organizations/', withKey(k.key));
      api.clock.advance(20_000);
      await api.call('GET', '/v1/organizations/', withKey(k.key));
      expect(Date.parse(await lastUsed())).to.equal(firstUse);
    });
  });

  describe('the apiKeyScope option of authenticate()', () => {
    let server: ReturnType<Koa['listen']>;
    let url: string;
    before(async () => {
      const deps = { ...testStack().service.deps, now: api.clock.now };
      const router = new Router();
      router.get('/read/', authenticate(deps, { apiKeyScope: 'metrics:read' }), (ctx) => {
        ctx.body = { user: ctx.state.principal?.user.email, via: ctx.state.principal?.via };
      });
      router.get('/push/', authenticate(deps, { apiKeyScope: 'reported_metrics:write' }), (ctx) => {
        ctx.body = { ok: true };
      });
      const app = new Koa();
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (e) {
          if (!(e instanceof HttpError)) throw e;
          ctx.status = e.status;
          ctx.body = e.body;
        }
      });
      app.use(router.routes());
      server = app.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));

    it('lets in a key with the scope as its owner, refuses one without it', async () => {
      const token = await tokenOf(w.users.maker.email);
      const reader = (await create(token, { name: 'r', scopes: ['metrics:read'] })).body;
      const writer = (await create(token, { name: 'w', scopes: ['reported_metrics:write'] })).body;
      const read = await call('GET', '/read/', { baseUrl: url, authorization: `Api-Key ${reader.key}` });
      expect(read.status).to.equal(200);
      expect(read.body).to.deep.equal({ user: w.users.maker.email, via: 'api-key' });
      const denied = await call('GET', '/read/', { baseUrl: url, authorization: `Api-Key ${writer.key}` });
      expect(denied.status).to.equal(403);
      expect(denied.body).to.deep.equal({ detail: 'This API key lacks the "metrics:read" scope.' });
      expect((await call('GET', '/push/', { baseUrl: url, authorization: `Api-Key ${writer.key}` })).status).to.equal(200);
      expect((await call('GET', '/push/', { baseUrl: url, authorization: `Api-Key ${reader.key}` })).status).to.equal(403);
      // Tokens still work there.
      expect((await call('GET', '/read/', { baseUrl: url, token })).body).to.deep.equal({ user: w.users.maker.email, via: 'token' });
    });
  });

  describe('the limit of 20 active keys', () => {
    it('holds under concurrent creations; the 21st gets {message}; revoked and expired keys do not count', async () => {
      const t = world();
      await seed(t.fixture);
      const token = (await api.call('POST', '/v1/login/', { json: { email: t.users.owner.email, password: t.password } })).body.token;
      const post = (body: object = {}) => api.call('POST', '/v1/user/api-keys/', { token, json: { name: 'k', scopes: ['metrics:read'], password: t.password, ...body } });
      expect((await post({ name: 'short-lived', expires_at: new Date(api.clock.t + 60_000).toISOString() })).status).to.equal(201);

      // 24 at once for the 19 places left: exactly 19 get one.
      const results = await Promise.all(Array.from({ length: 24 }, (_, i) => post({ name: `k${i}` })));
      const created = results.filter((r) => r.status === 201);
      expect(created).to.have.length(19);
      const refused = results.filter((r) => r.status !== 201);
      expect(refused).to.have.length(5);
      for (const r of refused) expect(r.body).to.deep.equal(LIMIT);
      expect(new Set(created.map((r) => r.body.id)).size).to.equal(19);
      expect((await api.call('GET', '/v1/user/api-keys/', { token })).body).to.have.length(20);

      // Revoking one frees a place; so does a key expiring.
      expect((await api.call('DELETE', `/v1/user/api-keys/${created[0]!.body.id}/`, { token })).status).to.equal(204);
      expect((await post()).status).to.equal(201);
      expect((await post()).body).to.deep.equal(LIMIT);
      api.clock.advance(61_000);
      expect((await post()).status).to.equal(201);
      const over = await post();
      expect(over.status).to.equal(400);
      expect(over.body).to.deep.equal(LIMIT);
    });
  });

  describe('throttle', () => {
    it('limits creation attempts per account', async () => {
      const limited = await accountApi({ limits: looseLimits({ apiKeyCreatePerAccount: { limit: 2, windowMs: 60_000 } }) });
      try {
        const token = (await limited.call('POST', '/v1/login/', { json: { email: w.users.loner.email, password: w.password } })).body.token;
        const post = () => limited.call('POST', '/v1/user/api-keys/', { token, json: { name: 'k', scopes: ['metrics:read'], password: 'wrong-password' } });
        expect((await post()).status).to.equal(400);
        expect((await post()).status).to.equal(400);
        const r = await post();
        expect(r.status).to.equal(429);
        expect(r.body.detail).to.match(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
      } finally {
        await limited.close();
      }
    });
  });
});
