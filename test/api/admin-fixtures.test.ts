import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { call, login, seed, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const run = promisify(execFile);

describe('loading fixtures into the running service', () => {
  const w = world();
  before(() => seed(w.fixture));

  it('loads with the operator secret and is idempotent', async () => {
    const w2 = world();
    const ops = `Ops-Token ${testStack().service.deps.opsToken}`;
    const first = await call('POST', '/v1/admin/fixtures/', { authorization: ops, json: w2.fixture });
    expect(first.status).to.equal(200);
    expect(first.body.loaded.users).to.deep.equal({ created: 4, updated: 0 });
    const again = await call('POST', '/v1/admin/fixtures/', { authorization: ops, json: w2.fixture });
    expect(again.body.loaded.users).to.deep.equal({ created: 0, updated: 4 });
    const token = await login(w2.users.owner.email, w2.password);
    const orgs = await call('GET', '/v1/organizations/', { token });
    expect(orgs.body[0].pairs).to.have.length(4);
    // one row per pair even after two loads
    const pairs = await testStack().service.deps.reference.pairs();
    expect(pairs.filter((p) => p.exchange === w2.ex)).to.have.length(3);
  });

  it('rejects a bad file naming the broken entry, and loads nothing of it', async () => {
    const w3 = world();
    const bad = structuredClone(w3.fixture);
    bad.pairs![2]!.exchange = 'no-such-exchange';
    const r = await call('POST', '/v1/admin/fixtures/', { authorization: `Ops-Token ${testStack().service.deps.opsToken}`, json: bad });
    expect(r.status).to.equal(400);
    expect(r.body.fixture.join('\n')).to.contain(`pairs[2] (no-such-exchange ${w3.asset}_PERP/USDT): exchange "no-such-exchange" is not a known exchange`);
    const orgs = await testStack().service.deps.reference.organizations();
    expect(orgs.map((o) => o.slug)).to.not.include(w3.project);
    const login = await call('POST', '/v1/login/', { json: { email: w3.users.owner.email, password: w3.password } });
    expect(login.status).to.equal(400);
  });

  it('rejects schema errors with the entry and field', async () => {
    const r = await call('POST', '/v1/admin/fixtures/', {
      authorization: `Ops-Token ${testStack().service.deps.opsToken}`,
      json: { users: [{ email: 'not-an-email', username: 'x', password: 'long-enough' }] },
    });
    expect(r.status).to.equal(400);
    expect(r.body.fixture[0]).to.equal('users[0] (not-an-email): email must match format "email"');
  });

  it('is for staff only: 403 for other users, 401 for a wrong secret', async () => {
    const token = await login(w.users.owner.email, w.password);
    expect((await call('POST', '/v1/admin/fixtures/', { token, json: {} })).status).to.equal(403);
    const wrong = await call('POST', '/v1/admin/fixtures/', { authorization: 'Ops-Token nope', json: {} });
    expect(wrong.status).to.equal(401);
    const staff = await login(w.users.staff.email, w.password);
    expect((await call('POST', '/v1/admin/fixtures/', { token: staff, json: {} })).status).to.equal(200);
  });

  it('npm run seed hands a file to the running service', async () => {
    const w4 = world();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-seed-'));
    const file = path.join(dir, 'fixture.json');
    fs.writeFileSync(file, JSON.stringify(w4.fixture));
    const { config } = testStack();
    const env = { ...process.env, DATA_DIR: config.dataDir, HOST: '127.0.0.1', PORT: new URL(testStack().url).port };
    await run(process.execPath, ['--import', 'tsx', 'ops/cli/seed.ts', file], { env });
    expect(await login(w4.users.maker.email, w4.password)).to.match(/^[0-9a-f]{64}$/);

    const bad = structuredClone(w4.fixture);
    bad.wallets![0]!.organization = w4.project; // a project cannot have wallets
    fs.writeFileSync(file, JSON.stringify(bad));
    const err = await run(process.execPath, ['--import', 'tsx', 'ops/cli/seed.ts', file], { env }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).to.equal(1);
    expect(err?.stderr).to.contain(`wallets[0] (${bad.wallets![0]!.id}): organization "${w4.project}" is not a market maker`);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a load that changes memberships, coverage or an organization is seen by the next request, though both are read once for many', async () => {
    const w5 = world();
    await seed(w5.fixture);
    const maker = await login(w5.users.maker.email, w5.password);
    const loner = await login(w5.users.loner.email, w5.password);
    const organizationsSeenBy = async (token: string) => ((await call('GET', '/v1/organizations/', { token })).body as { slug: string; name: string; pairs: { pair: string }[] }[]);
    // Read now, so the service holds them.
    expect((await organizationsSeenBy(maker))[0]!.pairs.map((p) => p.pair)).to.deep.equal([`${w5.asset}/USDT`]);
    expect(await organizationsSeenBy(loner)).to.deep.equal([]);

    const changed = structuredClone(w5.fixture);
    changed.coverage = [{ organization: w5.mm, assets: [w5.asset] }];
    changed.organizations![1]!.name = 'Maker renamed';
    for (const u of changed.users!) if (u.email === w5.users.loner.email) u.organizations = [w5.mm];
    await call('POST', '/v1/admin/fixtures/', { authorization: `Ops-Token ${testStack().service.deps.opsToken}`, json: changed });

    const mine = await organizationsSeenBy(maker);
    expect(mine[0]!.name).to.equal('Maker renamed');
    expect(mine[0]!.pairs.map((p) => p.pair).sort()).to.deep.equal([`${w5.asset}/USD`, `${w5.asset}/USDT`]);
    expect((await organizationsSeenBy(loner)).map((o) => o.slug)).to.deep.equal([w5.mm]);
    // The push judges against the same reads: the newly covered pair is accepted at once.
    const item = { organization: w5.mm, asset: w5.asset, exchange: w5.ex2, pair: `${w5.asset}/USD`, metric: 'volume/volume', interval: '1h', timestamp: '2026-01-01T00:00:00Z', value: 1 };
    expect((await call('POST', '/v2/organizations/reported-metrics/', { token: loner, json: [item] })).status).to.equal(202);

    // And a membership ended is gone at once.
    for (const u of changed.users!) if (u.email === w5.users.loner.email) u.organizations = [];
    await call('POST', '/v1/admin/fixtures/', { authorization: `Ops-Token ${testStack().service.deps.opsToken}`, json: changed });
    expect(await organizationsSeenBy(loner)).to.deep.equal([]);
    expect((await call('POST', '/v2/organizations/reported-metrics/', { token: loner, json: [item] })).status).to.equal(400);
  });
});
