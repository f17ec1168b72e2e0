// Market answers shared by identical requests, through the HTTP API: a second API over the
// service's dependencies with its own RecentAnswers and a clock the test holds still or
// moves. Two callers who may see different things, asking the same query at the same
// moment, each get their own answer; the same caller asking again within the second gets
// the same bytes without a computation; after it, a new one.
import { expect } from 'chai';
import { RecentAnswers } from '../../api/market-caches/recent-answers.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { call, login, seed, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

describe('market answers shared by identical requests', () => {
  const w = world();
  const clock = { t: Date.UTC(2026, 2, 4, 12, 0, 0) };
  const answers = new RecentAnswers({ reuseMs: 1000, now: () => clock.t });
  let api: RunningApi;
  const tokens: Record<'owner' | 'loner' | 'staff', string> = { owner: '', loner: '', staff: '' };

  before(async () => {
    await seed(w.fixture);
    api = await startApi({ ...testStack().service.deps, now: () => clock.t, marketAnswers: answers }, '127.0.0.1', 0);
    for (const role of ['owner', 'loner', 'staff'] as const) tokens[role] = await login(w.users[role].email, w.password);
  });
  after(async () => api?.close());

  const ask = (role: keyof typeof tokens, path: string) => call('GET', path, { baseUrl: api.url, token: tokens[role] });
  const counts = () => ({ computed: answers.computed, shared: answers.shared });

  it('callers who may see different things get their own answers to the same query', async () => {
    const path = `/v2/metrics/summary/?assets=${w.asset}&lookback=1-hour`;
    const before = counts();
    const owner = await ask('owner', path);
    const loner = await ask('loner', path);
    const staff = await ask('staff', path);
    expect(owner.status, owner.text).to.equal(200);
    expect(staff.status, staff.text).to.equal(200);
    // The asset is not the loner's: the answer computed for the owner must not reach them.
    expect(loner.status, loner.text).to.equal(400);
    expect(loner.body).to.deep.equal({ assets: [`"${w.asset}" is not one of your assets.`] });
    expect(counts()).to.deep.equal({ computed: before.computed + 3, shared: before.shared });

    // Each again, in the same second: the owner's answer shared, the same bytes; a refusal
    // is not kept (only requests in flight with it share it), so the loner's is made anew.
    expect((await ask('loner', path)).text).to.equal(loner.text);
    const again = await ask('owner', path);
    expect([again.status, again.text, again.headers.get('content-type')]).to.deep.equal([200, owner.text, owner.headers.get('content-type')]);
    expect(counts()).to.deep.equal({ computed: before.computed + 4, shared: before.shared + 1 });
  });

  it('a second after a computation began, its answer is no longer given: the next request computes', async () => {
    const path = `/v2/leaderboard/?assets=${w.asset}&lookback=1-hour`;
    clock.t += 60_000;
    await ask('owner', path);
    const before = counts();
    clock.t += 999;
    await Promise.all([ask('owner', path), ask('owner', path), ask('owner', path)]);
    expect(counts()).to.deep.equal({ computed: before.computed, shared: before.shared + 3 });
    clock.t += 1;
    await Promise.all([ask('owner', path), ask('owner', path), ask('owner', path)]);
    expect(counts()).to.deep.equal({ computed: before.computed + 1, shared: before.shared + 5 });
  });

  it('CSV and JSON are separate answers, each sent as the handler made it', async () => {
    // A fixed window, so the service's own API (its clock is the real one) asks the same.
    const path = `/v2/metrics/uptime/spread/?assets=${w.asset}&time_start=2026-03-04T10:00:00Z&time_end=2026-03-04T11:00:00Z&interval=5m`;
    clock.t += 60_000;
    const json = await ask('owner', path);
    const csv = await ask('owner', `${path}&type=csv&filename=spread.csv`);
    const csvAgain = await ask('owner', `${path}&type=csv&filename=spread.csv`);
    expect(json.headers.get('content-type')).to.match(/^application\/json/);
    expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
    expect(csvAgain.headers.get('content-disposition')).to.equal('attachment; filename="spread.csv"');
    expect(csvAgain.text).to.equal(csv.text);
    // The same request through the service's own API, which computes every request, answers the same bytes.
    const direct = await call('GET', `${path}&type=csv&filename=spread.csv`, { token: tokens.owner });
    expect(direct.text).to.equal(csv.text);
  });
});
