// The reported-metrics push (addendum section 3) against the running service: accepted
// items go through Kafka and the processor into mm_reported, a key pushed again replaces
// its value, and one invalid item fails the whole request with a list of per-item errors
// and writes nothing. Each validation rule, the body and size checks, API keys, and that an
// organization the caller is not in reads like one that does not exist.
import { expect } from 'chai';
import { MAX_PUSH_ITEMS, PUSH_MESSAGES } from '../../api/resources/reported-metrics/push.ts';

// The contract's words (api/openapi.yaml, api/http/validate.ts).
const GTE0 = 'Ensure this value is greater than or equal to 0.';
const NUMBER = 'A valid number is required.';
const NOT_A_LIST = 'Expected a non-empty list of at most 10000 reported metrics.';
import { ReportedRepository, type ReportedRow } from '../../domain/market-makers/reported.ts';
import { call, login, seed, uniq, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const PATH = '/v2/organizations/reported-metrics/';
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('reported-metrics push (POST /v2/organizations/reported-metrics/)', function () {
  this.timeout(60_000);
  const w = world();
  // A second market maker the maker is not a member of.
  const otherMm = `mm2-${w.tag}`;
  w.fixture.organizations!.push({ slug: otherMm, name: `Maker two ${w.tag}`, kind: 'market_maker' });
  w.fixture.coverage!.push({ organization: otherMm, assets: [w.asset] });
  const pair = `${w.asset}/USDT`;
  // A whole hour a day back: every interval's bucket starts there.
  const H = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 86_400_000;
  const item = (over: Record<string, unknown> = {}) => ({
    organization: w.mm,
    asset: w.asset,
    exchange: w.ex,
    pair,
    metric: 'volume/volume',
    interval: '1h',
    timestamp: iso(H),
    value: 1,
    ...over,
  });
  let maker: string;
  let owner: string;
  let staff: string;
  const repo = () => new ReportedRepository(testStack().service.deps.ch);
  const push = (token: string, json: unknown) => call('POST', PATH, { token, json });
  /** The rows of a metric once `ready` says they are all there. */
  const rowsOf = (metric: string, ready: (rows: ReportedRow[]) => boolean) =>
    waitFor(`mm_reported rows of ${metric}`, async () => {
      const rows = await repo().latest(w.mm, { metric });
      return ready(rows) && rows;
    });

  before(async () => {
    await seed(w.fixture);
    [maker, owner, staff] = await Promise.all([login(w.users.maker.email, w.password), login(w.users.owner.email, w.password), login(w.users.staff.email, w.password)]);
  });

  it('answers 202 {accepted} and the processor writes every item, with the request time as its push time', async () => {
    const before = Date.now();
    const r = await push(maker, [
      item({ metric: 'spread/spread_bps', interval: '1h', timestamp: iso(H + HOUR), value: 12.5 }),
      // Epoch milliseconds, and ISO 8601 without an offset (UTC) and with one.
      item({ metric: 'spread/spread_bps', interval: '5m', timestamp: H + 300_000, value: 0 }),
      item({ metric: 'spread/spread_bps', interval: '1d', timestamp: iso(H).replace('Z', ''), value: 3 }),
      item({ metric: 'spread/spread_bps', interval: '1h', timestamp: '2000-01-01T02:00:00+02:00', value: 4 }),
    ]);
    const after = Date.now();
    expect(r.status, r.text).to.equal(202);
    expect(r.body).to.deep.equal({ accepted: 4 });
    const rows = await rowsOf('spread/spread_bps', (x) => x.length === 4);
    const seen = rows.map(({ pushedAt: _p, ...x }) => x).sort((a, b) => a.timestamp - b.timestamp || a.interval.localeCompare(b.interval));
    const base = { organization: w.mm, asset: w.asset, exchange: w.ex, pair, metric: 'spread/spread_bps' };
    expect(seen).to.deep.equal([
      { ...base, interval: '1h', timestamp: Date.UTC(2000, 0, 1), value: 4 },
      { ...base, interval: '1d', timestamp: H, value: 3 },
      { ...base, interval: '5m', timestamp: H + 300_000, value: 0 },
      { ...base, interval: '1h', timestamp: H + HOUR, value: 12.5 },
    ]);
    // One push time for the whole request, within the request.
    expect(new Set(rows.map((x) => x.pushedAt)).size).to.equal(1);
    expect(rows[0]!.pushedAt).to.be.within(before, after);
  });

  it('replaces the value when the same key is pushed again (one row), the last item of a key winning within a request', async () => {
    const key = { metric: 'depth/ask_2bps', interval: '1d', timestamp: iso(H) };
    expect((await push(maker, [item({ ...key, value: 5 })])).status).to.equal(202);
    const first = await rowsOf(key.metric, (x) => x.length === 1);
    expect(first[0]!.value).to.equal(5);
    const again = await push(maker, [item({ ...key, value: 7 }), item({ ...key, value: 9 })]);
    expect(again.status).to.equal(202);
    expect(again.body).to.deep.equal({ accepted: 2 });
    const rows = await rowsOf(key.metric, (x) => x[0]?.value === 9);
    expect(rows).to.have.length(1);
    expect(rows[0]!.pushedAt).to.be.greaterThan(first[0]!.pushedAt);
  });

  it('fails a batch of 500 with one invalid item: 500 objects, only that one non-empty, and nothing written', async () => {
    const metric = 'depth/bid_2bps';
    const items = Array.from({ length: 500 }, (_, i) => item({ metric, interval: '5m', timestamp: iso(H - i * 300_000), value: i }));
    items[137] = { ...items[137]!, metric: 'depth/bid_7bps' };
    const r = await push(maker, items);
    expect(r.status).to.equal(400);
    expect(r.body).to.be.an('array').with.length(500);
    r.body.forEach((e: object, i: number) => expect(e, `item ${i}`).to.deep.equal(i === 137 ? { metric: [PUSH_MESSAGES.metric('depth/bid_7bps')] } : {}));
    // A valid push after it, on the same key (so the same partition): once it is written,
    // anything the failed request had produced would be too.
    expect((await push(maker, [item({ metric: 'depth/bid_3bps' })])).status).to.equal(202);
    await rowsOf('depth/bid_3bps', (x) => x.length === 1);
    expect(await repo().latest(w.mm, { metric })).to.deep.equal([]);
  });

  describe('each item is validated, one error list per field', () => {
    const cases: [string, Record<string, unknown>, object][] = [
      ['an organization the caller is not a member of', { organization: otherMm }, { organization: [PUSH_MESSAGES.organization(otherMm)] }],
      ['an unknown organization', { organization: 'no-such-org' }, { organization: [PUSH_MESSAGES.organization('no-such-org')] }],
      ['an asset the organization does not cover', { asset: w.other }, { asset: [PUSH_MESSAGES.asset(w.other)] }],
      ['an unknown asset', { asset: 'NOSUCHASSET' }, { asset: [PUSH_MESSAGES.asset('NOSUCHASSET')] }],
      ['a pair of another asset', { pair: `${w.other}/USDT` }, { pair: [PUSH_MESSAGES.pair(`${w.other}/USDT`, w.ex, w.asset)] }],
      ['an unknown pair', { pair: 'NOPE/USDT' }, { pair: [PUSH_MESSAGES.pair('NOPE/USDT', w.ex, w.asset)] }],
      ['an exchange the organization does not cover', { exchange: w.ex2, pair: `${w.asset}/USD` }, { exchange: [PUSH_MESSAGES.exchange(w.ex2)] }],
      ['a metric that is not an mm identifier', { metric: 'volume/twap' }, { metric: [PUSH_MESSAGES.metric('volume/twap')] }],
      ['an interval other than 5m, 1h, 1d', { interval: '1m' }, { interval: ['Not a valid choice; expected one of: 5m, 1h, 1d.'] }],
      ['a misaligned timestamp', { interval: '1h', timestamp: iso(H + 300_000) }, { timestamp: [PUSH_MESSAGES.misaligned('1h', H)] }],
      ['a day not starting at midnight UTC', { interval: '1d', timestamp: iso(H + HOUR) }, { timestamp: [PUSH_MESSAGES.misaligned('1d', H)] }],
      ['a future timestamp', { interval: '5m', timestamp: Math.ceil((Date.now() + 600_000) / 300_000) * 300_000 }, { timestamp: [PUSH_MESSAGES.future] }],
      ['a timestamp that is no time', { timestamp: 'yesterday' }, { timestamp: [PUSH_MESSAGES.timestamp] }],
      ['a fractional epoch', { timestamp: H + 0.5 }, { timestamp: [PUSH_MESSAGES.timestamp] }],
      ['a time before 1970', { interval: '1d', timestamp: '1969-12-31T00:00:00Z' }, { timestamp: [PUSH_MESSAGES.beforeEpoch] }],
      ['a negative value', { value: -0.01 }, { value: [GTE0] }],
      ['a coverage over 100 %', { metric: 'coverage/volume/volume_coverage', value: 100.5 }, { value: [PUSH_MESSAGES.percentage] }],
      ['an uptime over 100 %', { metric: 'uptime/spread/spread_uptime', value: 250 }, { value: [PUSH_MESSAGES.percentage] }],
      ['a value that is a string', { value: '5' }, { value: [NUMBER] }],
      ['a null value', { value: null }, { value: [NUMBER] }],
      ['a field that is not a string', { metric: 7 }, { metric: ['Not a valid string.'] }],
      ['missing fields', { value: undefined, organization: undefined }, { organization: ['This field is required.'], value: ['This field is required.'] }],
    ];
    for (const [what, over, expected] of cases) {
      it(`rejects ${what}`, async () => {
        const r = await push(maker, [item(), item(over)]);
        expect(r.status, r.text).to.equal(400);
        expect(r.body).to.deep.equal([{}, expected]);
      });
    }

    it('rejects a non-finite value (a number too large for a double)', async () => {
      const body = `[${JSON.stringify(item()).replace('"value":1', '"value":1e400')}]`;
      const res = await fetch(`${testStack().url}${PATH}`, { method: 'POST', headers: { Authorization: `Token ${maker}`, 'Content-Type': 'application/json' }, body });
      expect(res.status).to.equal(400);
      expect(await res.json()).to.deep.equal([{ value: ['Ensure this value is less than or equal to 1000000000000000.'] }]);
    });

    it('rejects an item that is not an object, and a market-maker check against a project organization', async () => {
      const r = await push(staff, [5, item()]);
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal([{ non_field_errors: ['Expected an object.'] }, {}]);
      const project = await push(staff, [item(), item({ organization: w.project })]);
      expect(project.body).to.deep.equal([{}, { organization: [PUSH_MESSAGES.notMarketMaker(w.project)] }]);
    });

    it('reports every field of an item at once: first the shapes (the contract), then what the caller may report', async () => {
      const shapes = await push(maker, [item({ asset: w.other, metric: 'x', interval: '2h', value: -1 })]);
      expect(shapes.body).to.deep.equal([{ interval: ['Not a valid choice; expected one of: 5m, 1h, 1d.'], value: [GTE0] }]);
      const rules = await push(maker, [item({ asset: w.other, metric: 'x' })]);
      expect(rules.body).to.deep.equal([{ asset: [PUSH_MESSAGES.asset(w.other)], metric: [PUSH_MESSAGES.metric('x')] }]);
    });
  });

  it('answers {message} to a body that is not a non-empty list, or a list over the bound', async () => {
    for (const json of [{}, item(), [], { items: [item()] }, 5, 'x', null]) {
      const r = await push(maker, json);
      expect(r.status, JSON.stringify(json)).to.equal(400);
      expect(r.body).to.deep.equal({ message: NOT_A_LIST });
    }
    const tooMany = await push(maker, Array.from({ length: MAX_PUSH_ITEMS + 1 }, () => item()));
    expect(tooMany.status).to.equal(400);
    expect(tooMany.body).to.deep.equal({ message: NOT_A_LIST });
  });

  it('tells a project member pushing for a market maker they are not in what it tells about an unknown organization', async () => {
    const mine = await push(owner, [item()]);
    const unknown = await push(owner, [item({ organization: 'no-such-org' })]);
    expect(mine.status).to.equal(400);
    expect(mine.body).to.deep.equal([{ organization: [PUSH_MESSAGES.organization(w.mm)] }]);
    expect(JSON.stringify(unknown.body).replace('no-such-org', w.mm)).to.equal(JSON.stringify(mine.body));
  });

  it('lets staff push for any market maker', async () => {
    const r = await push(staff, [item({ organization: otherMm, metric: 'uptime/spread/spread_uptime', value: 99.5 })]);
    expect(r.status, r.text).to.equal(202);
    const rows = await waitFor('the staff push', async () => {
      const x = await repo().latest(otherMm, { metric: 'uptime/spread/spread_uptime' });
      return x.length > 0 && x;
    });
    expect(rows[0]!.value).to.equal(99.5);
  });

  describe('authentication', () => {
    const keyWith = async (scopes: string[]) => {
      const r = await call('POST', '/v1/user/api-keys/', { token: maker, json: { name: uniq('push-'), password: w.password, scopes } });
      expect(r.status, r.text).to.equal(201);
      return r.body.key as string;
    };

    it('accepts an API key with reported_metrics:write', async () => {
      const key = await keyWith(['reported_metrics:write']);
      const r = await call('POST', PATH, { authorization: `Api-Key ${key}`, json: [item({ metric: 'coverage/volume/volume_coverage', value: 42 })] });
      expect(r.status, r.text).to.equal(202);
      expect((await rowsOf('coverage/volume/volume_coverage', (x) => x.length === 1))[0]!.value).to.equal(42);
    });

    it('answers 403 to an API key with only metrics:read, 401 without credentials', async () => {
      const key = await keyWith(['metrics:read']);
      const r = await call('POST', PATH, { authorization: `Api-Key ${key}`, json: [item()] });
      expect(r.status).to.equal(403);
      expect(r.body).to.deep.equal({ detail: 'This API key lacks the "reported_metrics:write" scope.' });
      const anonymous = await call('POST', PATH, { json: [item()] });
      expect(anonymous.status).to.equal(401);
      expect(anonymous.body).to.deep.equal({ detail: 'Authentication credentials were not provided.' });
    });
  });
});
