// What the contract refuses (api/openapi.yaml): numbers written other than plainly, values
// beyond their bounds, strings beyond their lengths, unknown metric identifiers, read-only
// fields; every refusal a 400 naming the field (413 and 431 for a body or a request line
// too large), and nothing changed.
import { expect } from 'chai';
import http from 'node:http';
import { call, login, seed, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('strict input, from the contract', () => {
  const w = world();
  const tokens: Record<string, string> = {};
  let loan = 0;
  let rfq = 0;
  const start = Date.now() + DAY;
  const loanBody = (over: Record<string, unknown> = {}) => ({
    market_maker: w.mm,
    asset: w.asset,
    model: 'loan_call_option',
    quantity: 1000,
    exchanges: [w.ex],
    pairs: [`${w.asset}/USDT`],
    start_date: iso(start),
    end_date: iso(start + 100 * DAY),
    tranches: [{ quantity: 1000, strike_basis: 'fixed', strike_price: 2, expires_at: iso(start + 90 * DAY) }],
    ...over,
  });
  const rfqBody = (over: Record<string, unknown> = {}) => ({ asset: w.asset, title: 'strict', models: ['loan_call_option'], exchanges: [w.ex], loan_budget: { quantity: 5000 }, term_days: 30, deadline: iso(start + 10 * DAY), ...over });
  const target = (over: Record<string, unknown> = {}) => ({ organization: w.project, asset: w.asset, exchange: w.ex, pair: `${w.asset}/USDT`, metric: 'volume/volume', threshold: 10, ...over });

  before(async () => {
    await seed(w.fixture);
    for (const who of ['owner', 'maker'] as const) tokens[who] = await login(w.users[who].email, w.password);
    const l = await call('POST', '/v2/organizations/loans/', { token: tokens.owner, json: loanBody() });
    expect(l.status, l.text).to.equal(201);
    loan = l.body.id;
    const r = await call('POST', '/v2/organizations/rfqs/', { token: tokens.owner, json: rfqBody() });
    expect(r.status, r.text).to.equal(201);
    rfq = r.body.id;
  });

  const get = (path: string) => call('GET', path, { token: tokens.owner });
  const expectField = (r: { status: number; body: unknown; text: string }, field: string) => {
    expect(r.status, r.text).to.equal(400);
    expect(r.body, r.text).to.have.property(field);
  };

  it('a number in a query string is a plain decimal: no infinities, exponents, hex or padding', async () => {
    for (const v of ['-Infinity', 'Infinity', '%2BInfinity', '1e309', '0x10', '%2010', '010', 'NaN']) {
      expectField(await get(`/v2/organizations/market-maker-metrics/reconciliation/?tolerance_pct=${v}&bps=10&interval=a&lookback=1-hour`), 'tolerance_pct');
    }
    expectField(await get('/v2/metrics/summary/?bps=0x0A'), 'bps');
    expectField(await get('/v2/metrics/summary/?bps=10,1e1'), 'bps');
    expectField(await get('/v2/organizations/targets/?page=0x2'), 'page');
    expectField(await get('/v2/organizations/loans/?page_size=1e2'), 'page_size');
    expect((await get('/v2/organizations/market-maker-metrics/reconciliation/?tolerance_pct=12.5&bps=10&interval=a&lookback=1-hour')).status).to.equal(200);
    expect((await get('/v2/metrics/summary/?bps=0.5,10')).status).to.equal(200);
  });

  it('a number in a JSON body is a JSON number', async () => {
    expectField(await call('POST', '/v2/organizations/loans/', { token: tokens.owner, json: loanBody({ quantity: '0x3e8' }) }), 'quantity');
    expectField(await call('POST', '/v2/organizations/rfqs/', { token: tokens.owner, json: rfqBody({ term_days: '0x1e' }) }), 'term_days');
    expectField(await call('POST', '/v2/organizations/targets/preview/', { token: tokens.owner, json: { scopes: [{ organization: w.project, asset: w.asset }], apply_scaling: 'yes' } }), 'apply_scaling');
  });

  it('numbers have bounds that make sense for their field', async () => {
    expectField(await call('POST', '/v2/organizations/loans/', { token: tokens.owner, json: loanBody({ quantity: 1e308 }) }), 'quantity');
    for (const [threshold, metric] of [[1e308, 'volume/volume'], [-3, 'volume/volume'], [5000, 'uptime/spread/10bps']] as const) {
      const r = await call('POST', '/v2/organizations/targets/batch/', { token: tokens.owner, json: { create_targets: [target({ threshold, metric })] } });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.create_targets[0], r.text).to.have.property('threshold');
    }
    expect((await get('/v2/organizations/targets/?metrics=uptime/spread/10bps')).body).to.deep.equal([]);
  });

  it('every string has a maximum length', async () => {
    expectField(await call('POST', '/v2/organizations/loans/', { token: tokens.owner, json: loanBody({ settlement_asset: 'X'.repeat(100_000) }) }), 'settlement_asset');
    expectField(await call('PATCH', `/v2/organizations/rfqs/${rfq}/`, { token: tokens.owner, json: { description: 'x'.repeat(20_000) } }), 'description');
  });

  it("preview names scopes[i].metrics for an unknown identifier and for one of the other target type", async () => {
    for (const metric of ['bogus', "volume/volume'; DROP TABLE targets; --"]) {
      const r = await call('POST', '/v2/organizations/targets/preview/', { token: tokens.owner, json: { scopes: [{ organization: w.project, asset: w.asset, metrics: [metric] }] } });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.scopes[0], r.text).to.have.property('metrics');
    }
    const mmOnly = await call('POST', '/v2/organizations/targets/preview/', { token: tokens.owner, json: { scopes: [{ organization: w.project, asset: w.asset, metrics: ['coverage/volume/volume_coverage'] }] } });
    expect(mmOnly.status, mmOnly.text).to.equal(400);
    expect(mmOnly.body).to.deep.equal({ scopes: [{ metrics: ['"coverage/volume/volume_coverage" is not a metric identifier of gb targets.'] }] });
  });

  it('a read-only field in a PATCH is refused by name, and the draft stays as it was', async () => {
    const r = await call('PATCH', `/v2/organizations/loans/${loan}/`, { token: tokens.owner, json: { status: 'active', id: 99, quantity: 2000 } });
    expect(r.status, r.text).to.equal(400);
    expect(r.body).to.have.keys(['status', 'id']);
    const after = await get(`/v2/organizations/loans/${loan}/`);
    expect(after.body).to.include({ status: 'draft', quantity: 1000, id: loan });
    expectField(await call('PATCH', `/v2/organizations/rfqs/${rfq}/`, { token: tokens.owner, json: { status: 'open' } }), 'status');
  });

  it("acting for an organization one may not act for is 403, for targets as for loans and RFQs", async () => {
    const preview = await call('POST', '/v2/organizations/targets/preview/', { token: tokens.maker, json: { scopes: [{ organization: w.project, asset: w.asset }] } });
    const batch = await call('POST', '/v2/organizations/targets/batch/', { token: tokens.maker, json: { create_targets: [target()] } });
    const loanByMaker = await call('POST', '/v2/organizations/loans/', { token: tokens.maker, json: loanBody() });
    const rfqByMaker = await call('POST', '/v2/organizations/rfqs/', { token: tokens.maker, json: rfqBody() });
    for (const r of [preview, batch, loanByMaker, rfqByMaker]) {
      expect(r.status, r.text).to.equal(403);
      expect(r.body).to.have.property('detail');
    }
  });

  it('a manual price scaling shows its reference as the current price', async () => {
    const r = await call('POST', '/v2/organizations/targets/batch/', { token: tokens.owner, json: { create_targets: [target({ metric: 'volume/twap', scaling_enabled: true, scaling_source: 'manual', scaling_reference_price: 2.5 })] } });
    expect(r.status, r.text).to.equal(201);
    expect(r.body[0]).to.include({ current_price: 2.5, scaling_factor: 1, effective_threshold: 10 });
    const listed = (await get('/v2/organizations/targets/')).body.find((t: { id: number }) => t.id === r.body[0].id);
    expect(listed).to.include({ current_price: 2.5 });
  });

  it('a long query string is read; one over 64 kB gets 431 and a body over the limit 413, both {detail}', async () => {
    const long = await get(`/v2/metrics/summary/?assets=${Array.from({ length: 2000 }, (_, i) => `LONGASSET${i}`).join(',')}`);
    expect(long.status).to.equal(400);
    expect(long.body.assets).to.include('Ensure this field has no more than 100 elements.');
    const huge = await rawRequest('GET', `/v2/metrics/summary/?assets=${'A'.repeat(100_000)}`);
    expect(huge.status).to.equal(431);
    expect(JSON.parse(huge.body)).to.have.property('detail');
    const big = await call('POST', '/v2/organizations/reported-metrics/', { token: tokens.maker, json: Array.from({ length: 230_000 }, () => ({ organization: w.mm, asset: w.asset, exchange: w.ex, pair: `${w.asset}/USDT`, metric: 'volume/volume', interval: '1h', timestamp: '2026-01-01T00:00:00Z', value: 1 })) });
    expect(big.status).to.equal(413);
    expect(big.body).to.have.property('detail');
  });
});

/** A request with no client-side limits of its own on the request line. */
function rawRequest(method: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(testStack().url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, maxHeaderSize: 1 << 20 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
