// api/openapi.yaml as the one contract: an outside linter accepts it, the typed client and
// the domain's fixed sets agree with it, the router serves exactly its operations, and
// every operation answers as it says (test/support/helpers.ts holds every answer a test
// reads through `call` to it; here each operation is asked at least once, through the
// generated client where a body or parameters are typed).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { createRouter } from '../../api/app.ts';
import { createApiClient, type ApiClient } from '../../api/client/index.ts';
import { clientTypes, TYPES } from '../../api/client/generate.ts';
import { Contract } from '../../api/http/contract.ts';
import { GB_METRICS, LEVELS_BPS, MM_METRICS } from '../../domain/market/facts.ts';
import { call, holdToContract, login, seed, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const contract = new Contract();
const doc = parse(contract.text) as { components: { schemas: Record<string, { enum?: unknown[] }> } };

/** A client whose every answer is held to the document, as `call` holds its own. */
function client(credentials: { token?: string; apiKey?: string } = {}): ApiClient {
  const api = createApiClient(testStack().url, credentials);
  api.use({
    async onResponse({ request, response }) {
      const url = new URL(request.url);
      const text = await response.clone().text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // CSV, YAML or empty
      }
      holdToContract(request.method, url.pathname, response, body);
      return undefined;
    },
  });
  return api;
}

describe('the contract (api/openapi.yaml)', () => {
  it("passes Redocly CLI's recommended rules", function () {
    this.timeout(120_000);
    const r = spawnSync(process.execPath, [`${root}node_modules/@redocly/cli/bin/cli.js`, 'lint', 'api/openapi.yaml', '--format', 'stylish'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' },
    });
    expect(r.status, `${r.stdout}\n${r.stderr}`).to.equal(0);
    expect(r.stdout + r.stderr).to.not.match(/You have \d+ warnings?/);
  });

  it('is what the typed client was generated from (npm run client:generate)', async () => {
    expect(fs.readFileSync(TYPES, 'utf8') === (await clientTypes()), 'api/client/schema.ts is stale: run npm run client:generate').to.equal(true);
  });

  it("lists the domain's levels and metric identifiers, no more and no fewer", () => {
    expect(doc.components.schemas.Level!.enum).to.deep.equal([...LEVELS_BPS]);
    expect([...(doc.components.schemas.MetricId!.enum as string[])].sort()).to.deep.equal([...new Set([...GB_METRICS, ...MM_METRICS])].sort());
  });

  it('is what the router serves: every operation, each once, nothing else', () => {
    const router = createRouter(testStack().service.deps, contract);
    const served = router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m.toLowerCase()} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`));
    const documented = [...contract.operations.values()].map((op) => `${op.method} ${op.path}`);
    expect(served.sort()).to.deep.equal(documented.sort());
  });

  it('is served at /openapi.yaml', async () => {
    const r = await client().GET('/openapi.yaml', { parseAs: 'text' });
    expect(r.response.status).to.equal(200);
    expect(r.data).to.equal(contract.text);
  });

  it('every operation answers as documented: without credentials, and with a body it refuses', async () => {
    for (const op of contract.operations.values()) {
      const path = op.path.replace(/\{\w+\}/g, '1');
      const anonymous = await call(op.method.toUpperCase(), path, op.bodies.size ? { json: {} } : {});
      if (op.security.length > 0) expect(anonymous.status, `${op.id}: ${anonymous.text}`).to.equal(401);
    }
  });

  describe('signed in, through the typed client', () => {
    const w = world();
    let owner: ApiClient;
    let maker: ApiClient;
    before(async () => {
      await seed(w.fixture);
      owner = client({ token: await login(w.users.owner.email, w.password) });
      maker = client({ token: await login(w.users.maker.email, w.password) });
    });

    it('reads the session, organizations, the market and the market-maker endpoints as typed', async () => {
      const session = await owner.GET('/v1/session/');
      expect(session.data?.user.email).to.equal(w.users.owner.email);
      const orgs = await owner.GET('/v1/organizations/');
      expect(orgs.data?.map((o) => o.slug)).to.deep.equal([w.project]);
      const summary = await owner.GET('/v2/metrics/summary/', { params: { query: { assets: [w.asset], bps: [1, 10] } } });
      expect(summary.response.status).to.equal(200);
      expect(summary.data).to.be.an('array');
      const posted = await owner.POST('/v2/leaderboard/', { body: { assets: [w.asset], bps: '1,10', page: 1 } });
      expect(posted.response.status).to.equal(200);
      const mm = await owner.GET('/v2/organizations/market-maker-metrics/reconciliation/', { params: { query: { bps: [10], interval: 'a', lookback: '1-hour' } } });
      expect(mm.response.status).to.equal(200);
    });

    it('lists, creates and reads loans, RFQs and targets as typed', async () => {
      const start = new Date(Date.now() + 86_400_000).toISOString();
      const end = new Date(Date.now() + 200 * 86_400_000).toISOString();
      const loan = await owner.POST('/v2/organizations/loans/', {
        body: { market_maker: w.mm, asset: w.asset, model: 'loan_call_option', quantity: 1000, exchanges: [w.ex], pairs: [`${w.asset}/USDT`], start_date: start, end_date: end, tranches: [{ quantity: 1000, strike_basis: 'fixed', strike_price: 2, expires_at: end }] },
      });
      expect(loan.response.status, JSON.stringify(loan.error)).to.equal(201);
      const read = await maker.GET('/v2/organizations/loans/{id}/', { params: { path: { id: loan.data!.id } } });
      expect(read.data?.status).to.equal('draft');
      const rfq = await owner.POST('/v2/organizations/rfqs/', {
        body: { asset: w.asset, title: 'typed', models: ['loan_call_option'], exchanges: [w.ex], loan_budget: { quantity: 5000 }, term_days: 30, deadline: end },
      });
      expect(rfq.response.status, JSON.stringify(rfq.error)).to.equal(201);
      const targets = await owner.GET('/v2/organizations/targets/', { params: { query: { page: 1, include_facets: true } } });
      expect(targets.response.status).to.equal(200);
    });
  });
});
