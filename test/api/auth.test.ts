import { expect } from 'chai';
import { DEFAULT_LIMITS } from '../../api/deps.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { call, login, seed, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

describe('sign-in (POST /v1/login/, /v1/logout/, GET /v1/session/)', () => {
  const w = world();
  before(() => seed(w.fixture));

  it('logs in with JSON and returns token, expiry and the user', async () => {
    const r = await call('POST', '/v1/login/', { json: { email: w.users.owner.email, password: w.password } });
    expect(r.status).to.equal(200);
    expect(r.body.token).to.match(/^[0-9a-f]{64}$/);
    expect(Object.keys(r.body.user).sort()).to.deep.equal(['email', 'first_name', 'id', 'last_name', 'username']);
    expect(r.body.user.email).to.equal(w.users.owner.email);
    expect(r.body.user.id).to.be.a('number');
    const hours = (Date.parse(r.body.expiry) - Date.now()) / 3_600_000;
    expect(hours).to.be.within(23.9, 24.01);
  });

  it('logs in with a form body, and e-mail case does not matter', async () => {
    const r = await call('POST', '/v1/login/', { form: { email: w.users.owner.email.toUpperCase(), password: w.password } });
    expect(r.status).to.equal(200);
    expect(r.body.token).to.be.a('string');
  });

  it('remember_me gives a token that idles out after 7 days, not 1', async () => {
    const r = await call('POST', '/v1/login/', { json: { email: w.users.owner.email, password: w.password, remember_me: true } });
    expect(r.status).to.equal(200);
    const days = (Date.parse(r.body.expiry) - Date.now()) / 86_400_000;
    expect(days).to.be.within(6.99, 7.01);
  });

  it('rejects a wrong password or unknown e-mail under non_field_errors', async () => {
    for (const json of [
      { email: w.users.owner.email, password: 'wrong-password' },
      { email: `nobody-${w.tag}@test.example`, password: w.password },
    ]) {
      const r = await call('POST', '/v1/login/', { json });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({ non_field_errors: ['Unable to log in with provided credentials.'] });
    }
  });

  it('rejects a missing e-mail or password under non_field_errors', async () => {
    for (const json of [{ email: w.users.owner.email }, { password: 'x' }, {}]) {
      const r = await call('POST', '/v1/login/', { json });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({ non_field_errors: ['Must include "email" and "password".'] });
    }
  });

  it('answers 401 with the two fixed messages', async () => {
    const missing = await call('GET', '/v1/session/');
    expect(missing.status).to.equal(401);
    expect(missing.body).to.deep.equal({ detail: 'Authentication credentials were not provided.' });
    const bad = await call('GET', '/v1/session/', { token: 'f'.repeat(64) });
    expect(bad.status).to.equal(401);
    expect(bad.body).to.deep.equal({ detail: 'Invalid token.' });
    const noWord = await call('GET', '/v1/session/', { authorization: 'f'.repeat(64) });
    expect(noWord.body).to.deep.equal({ detail: 'Authentication credentials were not provided.' });
  });

  it('logout revokes only the token used', async () => {
    const a = await login(w.users.maker.email, w.password);
    const b = await login(w.users.maker.email, w.password);
    const out = await call('POST', '/v1/logout/', { token: a });
    expect(out.status).to.equal(204);
    const dead = await call('GET', '/v1/session/', { token: a });
    expect(dead.status).to.equal(401);
    expect(dead.body).to.deep.equal({ detail: 'Invalid token.' });
    const alive = await call('GET', '/v1/session/', { token: b });
    expect(alive.status).to.equal(200);
  });

  it('GET /v1/session/ returns the user, expiry and organizations', async () => {
    const token = await login(w.users.owner.email, w.password);
    const r = await call('GET', '/v1/session/', { token });
    expect(r.status).to.equal(200);
    expect(r.body.user.username).to.equal(w.users.owner.username);
    expect(r.body.organizations).to.deep.equal([{ slug: w.project, name: `Project ${w.tag}` }]);
    expect(Date.parse(r.body.expiry)).to.be.greaterThan(Date.now());
    expect(r.body.staff).to.equal(false);
    const staff = await call('GET', '/v1/session/', { token: await login(w.users.staff.email, w.password) });
    expect([staff.status, staff.body.staff]).to.deep.equal([200, true]);
  });

  it('a wrong URL gets an HTML 404 page; a wrong method gets 405 in JSON', async () => {
    const r = await call('GET', '/v1/no-such-thing/');
    expect(r.status).to.equal(404);
    expect(r.headers.get('content-type')).to.match(/^text\/html/);
    expect(r.text).to.match(/<h1>Not Found<\/h1>/);
    const noSlash = await call('POST', '/v1/login', { json: {} });
    expect(noSlash.status).to.equal(404);
    // Paths as the contract writes them: another case or a second slash names nothing.
    const token = await login(w.users.loner.email, w.password);
    for (const path of ['/V1/SESSION/', '/v1/Session/', '/v1/session//']) {
      const other = await call('GET', path, { token });
      expect([path, other.status, other.headers.get('content-type')]).to.deep.equal([path, 404, 'text/html; charset=utf-8']);
    }
    expect((await call('GET', '/v1/session/', { token })).status).to.equal(200);
    const m = await call('GET', '/v1/login/');
    expect(m.status).to.equal(405);
    expect(m.body).to.deep.equal({ detail: 'Method "GET" not allowed.' });
    expect(m.headers.get('allow')).to.contain('POST');
  });

  it('a malformed JSON body is a 400, not a crash', async () => {
    const res = await fetch(`${testStack().url}/v1/login/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{nope' });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { non_field_errors: string[] }).non_field_errors[0]).to.match(/Malformed request body/);
  });

  it('a caller without a valid token gets 401 whatever its body (the body is read after authentication)', async () => {
    for (const path of ['/v2/metrics/summary/', '/v1/logout/', '/v2/organizations/targets/preview/']) {
      for (const headers of [{}, { Authorization: 'Token nope' }] as Record<string, string>[]) {
        const res = await fetch(`${testStack().url}${path}`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: '{nope' });
        expect([path, res.status]).to.deep.equal([path, 401]);
      }
    }
    const token = await login(w.users.loner.email, w.password);
    const signedIn = await fetch(`${testStack().url}/v2/metrics/summary/`, { method: 'POST', headers: { Authorization: `Token ${token}`, 'Content-Type': 'application/json' }, body: '{nope' });
    expect(signedIn.status).to.equal(400);
  });
});

describe('login throttle', () => {
  const w = world();
  let api: RunningApi;
  before(async () => {
    await seed(w.fixture);
    // A second API on the same service, with limits small enough to reach in a test.
    const deps = testStack().service.deps;
    api = await startApi(
      { ...deps, limits: { ...DEFAULT_LIMITS, loginPerAccount: { limit: 3, windowMs: 60_000 }, loginPerAddress: { limit: 1000, windowMs: 60_000 } } },
      '127.0.0.1',
      0,
    );
  });
  after(() => api.close());

  it('answers 429 with the seconds to wait once an account is over its limit', async () => {
    const json = { email: w.users.loner.email, password: 'wrong' };
    for (let i = 0; i < 3; i++) expect((await call('POST', '/v1/login/', { json, baseUrl: api.url })).status).to.equal(400);
    const r = await call('POST', '/v1/login/', { json: { ...json, password: w.password }, baseUrl: api.url });
    expect(r.status).to.equal(429);
    expect(r.body.detail).to.match(/^Request was throttled\. Expected available in (\d+) seconds?\.$/);
    const wait = Number(/(\d+)/.exec(r.body.detail)![1]);
    expect(wait).to.be.within(1, 60);
    expect(r.headers.get('retry-after')).to.equal(String(wait));
    // Another account from the same address is not affected.
    const other = await call('POST', '/v1/login/', { json: { email: w.users.owner.email, password: w.password }, baseUrl: api.url });
    expect(other.status).to.equal(200);
  });

  it('has documented defaults', () => {
    expect(DEFAULT_LIMITS.loginPerAccount.limit).to.be.greaterThan(0);
    expect(DEFAULT_LIMITS.loginPerAddress.limit).to.be.greaterThan(DEFAULT_LIMITS.loginPerAccount.limit);
  });
});
