// Targets: saving batches all or nothing, the preview's changes and batch, and the list
// with its filters, paging and facets, as each role (specification 4.8, 4.9; addendum
// sections 3 and 6).
import { expect } from 'chai';
import { BATCH_MESSAGES } from '../../api/resources/targets/batch.ts';
import { TARGET_MESSAGES } from '../../api/resources/targets/input.ts';
import { call, login, seed, world } from '../support/helpers.ts';

type Listed = { id: number; type: string; organization: { slug: string }; asset: string; pair: string; metric: string; threshold: number; direction: string; status: string; market_hours: string | null; updates: { status: string }[] };

describe('targets (list, preview, batch)', function () {
  this.timeout(60_000);
  const w = world();
  const project2 = `proj2-${w.tag}`;
  const assetC = `C${w.tag.toUpperCase()}`;
  w.fixture.organizations!.push({ slug: project2, name: `Project two ${w.tag}`, kind: 'project' });
  w.fixture.assets!.push({ symbol: assetC, name: 'C', owner: project2, labels: ['c-label'] });
  w.fixture.pairs!.push({ exchange: w.ex, pair: `${assetC}/USDT`, asset: assetC, market_type: 'spot' });
  w.fixture.coverage!.push({ organization: w.mm, assets: [assetC] });
  const owner2 = { email: `owner2-${w.tag}@test.example`, username: `owner2-${w.tag}`, password: w.password, organizations: [project2] };
  w.fixture.users!.push(owner2);
  const spot = `${w.asset}/USDT`;
  const tokens: Record<string, string> = {};
  const gb = (over: Record<string, unknown> = {}) => ({ organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, metric: 'volume/volume', threshold: 1000, ...over });
  const mm = (over: Record<string, unknown> = {}) => ({ organization: w.mm, asset: w.asset, exchange: w.ex, pair: spot, metric: 'depth/bid_2bps', threshold: 5000, ...over });
  const batch = (who: string, json: unknown) => call<Listed[] & Record<string, unknown>>('POST', '/v2/organizations/targets/batch/', { token: tokens[who], json });
  const list = (who: string, q: Record<string, string> = {}) => call<Listed[]>('GET', `/v2/organizations/targets/?${new URLSearchParams(q)}`, { token: tokens[who] });
  const ids: Record<string, number> = {};

  before(async () => {
    await seed(w.fixture);
    for (const [who, u] of Object.entries({ ...w.users, owner2 })) tokens[who] = await login(u.email, w.password);
    const a = await batch('owner', {
      delete_ids: [],
      create_targets: [gb(), gb({ metric: 'spread/spread_bps', threshold: 20, market_hours: 'market-hours', telegram_notifications: true }), mm(), mm({ metric: 'volume/volume', threshold: 2e5 })],
    });
    expect(a.status, a.text).to.equal(201);
    [ids.volume, ids.spread, ids.mmDepth, ids.mmVolume] = a.body.map((t) => t.id) as [number, number, number, number];
    const b = await batch('owner2', { create_targets: [{ organization: project2, asset: assetC, exchange: w.ex, pair: `${assetC}/USDT`, metric: 'depth/ask_10bps', threshold: 1 }] });
    expect(b.status, b.text).to.equal(201);
    ids.other = b.body[0]!.id;
  });

  it('a batch creates targets with their type from the organization, defaults and an unchecked status', async () => {
    const r = await list('owner', { target_organizations: w.project });
    const spread = r.body.find((t) => t.id === ids.spread)!;
    expect(spread).to.include({ type: 'gb', asset: w.asset, pair: spot, metric: 'spread/spread_bps', threshold: 20, direction: 'below', market_hours: 'market-hours', status: 'unchecked' });
    expect(spread.updates.map((u) => u.status)).to.deep.equal(['unchecked']);
    const volume = r.body.find((t) => t.id === ids.volume)!;
    expect(volume).to.include({ direction: 'above', market_hours: null });
    expect(Object.keys(volume)).to.include.members(['effective_threshold', 'scaling_mode', 'scaling_enabled', 'scaling_source', 'scaling_reference_price', 'current_price', 'scaling_factor', 'telegram_notifications', 'active']);
  });

  describe('who sees what', () => {
    const seen = async (who: string) => (await list(who)).body.map((t) => t.id).filter((id) => Object.values(ids).includes(id)).sort((a, b) => a - b);
    const sorted = (...xs: number[]) => xs.sort((a, b) => a - b);
    it('a project member sees its gb targets and the mm targets on its assets', async () => {
      expect(await seen('owner')).to.deep.equal(sorted(ids.volume!, ids.spread!, ids.mmDepth!, ids.mmVolume!));
    });
    it("a market maker sees its own mm targets, not the project's gb targets", async () => {
      expect(await seen('maker')).to.deep.equal(sorted(ids.mmDepth!, ids.mmVolume!));
    });
    it("another project's member sees only its own", async () => {
      expect(await seen('owner2')).to.deep.equal([ids.other]);
    });
    it('staff see all; a user of no organization none', async () => {
      expect(await seen('staff')).to.deep.equal(sorted(...Object.values(ids)));
      expect(await seen('loner')).to.deep.equal([]);
    });
  });

  describe('a batch is all or nothing', () => {
    it('one invalid target fails the batch: one object per item, nothing written', async () => {
      const before = (await list('staff')).body.length;
      const r = await batch('owner', { create_targets: [gb({ metric: 'volume/twap' }), gb({ metric: 'depth/bid_7bps' })] });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({ create_targets: [{}, { metric: ['Not a metric identifier of specification 4.9 (e.g. depth/bid_10bps).'] }] });
      expect((await list('staff')).body.length).to.equal(before);
    });
    it('deleting an id the caller may not see reads as not found; a market maker, which sees its targets, changes none', async () => {
      const hidden = await batch('owner', { delete_ids: [ids.other], create_targets: [gb({ metric: 'volume/vwap' })] });
      expect(hidden.body).to.deep.equal({ delete_ids: [BATCH_MESSAGES.notFound(ids.other!)] });
      const unknown = await batch('owner', { delete_ids: [987654321] });
      expect(unknown.body).to.deep.equal({ delete_ids: [BATCH_MESSAGES.notFound(987654321)] });
      // A market maker sees its own targets but sets none: refused before any id is looked at.
      const maker = await batch('maker', { delete_ids: [ids.mmDepth] });
      expect([maker.status, maker.body]).to.deep.equal([403, { detail: TARGET_MESSAGES.notManager }]);
      expect((await list('staff', { target_assets: w.asset, metrics: 'volume/vwap' })).body).to.deep.equal([]);
    });
    it('a market maker may not set targets; a second target of the same key needs the first deleted', async () => {
      // A market maker's member sets no targets: refused whole (403) whatever it sends, as for loans and RFQs.
      for (const body of [{ create_targets: [mm({ metric: 'depth/ask_2bps' })] }, { delete_ids: [], create_targets: [] }, { create_targets: 'nope' }]) {
        const maker = await batch('maker', body);
        expect([maker.status, maker.body]).to.deep.equal([403, { detail: TARGET_MESSAGES.notManager }]);
      }
      const preview = await call('POST', '/v2/organizations/targets/preview/', { token: tokens.maker, json: { scopes: [{ organization: w.mm, asset: w.asset }] } });
      expect([preview.status, preview.body]).to.deep.equal([403, { detail: TARGET_MESSAGES.notManager }]);
      // A project's member acting for an organization it does not manage: the same refusal, naming it.
      const foreign = await batch('owner2', { create_targets: [gb()] });
      expect([foreign.status, foreign.body]).to.deep.equal([403, { detail: TARGET_MESSAGES.organization(w.project) }]);
      const again = await batch('owner', { create_targets: [gb()] });
      expect(again.body).to.deep.equal({ create_targets: [{ non_field_errors: [BATCH_MESSAGES.duplicate(ids.volume!)] }] });
      const twice = await batch('owner', { create_targets: [gb({ metric: 'volume/twap' }), gb({ metric: 'volume/twap' })] });
      expect(twice.body).to.deep.equal({ create_targets: [{}, { non_field_errors: [BATCH_MESSAGES.repeated] }] });
    });
    it('an API key cannot change targets; a key with metrics:read lists them', async () => {
      const created = await call<{ key: string }>('POST', '/v1/user/api-keys/', { token: tokens.owner, json: { name: 'k', password: w.password, scopes: ['metrics:read'] } });
      const r = await call('POST', '/v2/organizations/targets/batch/', { authorization: `Api-Key ${created.body.key}`, json: { create_targets: [] } });
      expect(r.status).to.equal(403);
      const l = await call<Listed[]>('GET', '/v2/organizations/targets/', { authorization: `Api-Key ${created.body.key}` });
      expect(l.status).to.equal(200);
      expect(l.body.length).to.be.at.least(4);
    });
  });

  describe('preview', () => {
    const scope = { organization: w.project, asset: w.asset, metrics: ['volume/volume', 'spread/spread_bps', 'depth/bid_2bps'] };
    it('keeps what a posted target leaves out (its Telegram notifications, whether it is evaluated) as the existing target has it', async () => {
      const spreadScope = { organization: w.project, asset: w.asset, metrics: ['spread/spread_bps'] };
      const same = await call<Record<string, any>>('POST', '/v2/organizations/targets/preview/', {
        token: tokens.owner,
        json: { scopes: [spreadScope], targets: [gb({ metric: 'spread/spread_bps', threshold: 20, market_hours: 'market-hours' })] },
      });
      expect(same.status, same.text).to.equal(200);
      expect(same.body.summary).to.deep.equal({ added: 0, modified: 0, removed: 0 });
      const off = await call<Record<string, any>>('POST', '/v2/organizations/targets/preview/', {
        token: tokens.owner,
        json: { scopes: [spreadScope], targets: [gb({ metric: 'spread/spread_bps', threshold: 20, market_hours: 'market-hours', telegram_notifications: false })] },
      });
      expect(off.body.changes.map((c: { action: string; changed_fields: string[] }) => [c.action, c.changed_fields])).to.deep.equal([['modified', ['telegram_notifications']]]);
      // One target per key, as in the batch that would save it.
      const twice = await call<Record<string, any>>('POST', '/v2/organizations/targets/preview/', {
        token: tokens.owner,
        json: { scopes: [spreadScope], targets: [gb({ metric: 'spread/spread_bps', threshold: 1 }), gb({ metric: 'spread/spread_bps', threshold: 2 })] },
      });
      expect([twice.status, twice.body]).to.deep.equal([400, { targets: [{}, { non_field_errors: [BATCH_MESSAGES.repeated] }] }]);
    });
    it('lists added, modified and removed targets with the batch that saves them, and saves nothing', async () => {
      const before = (await list('staff')).body;
      const r = await call<Record<string, any>>('POST', '/v2/organizations/targets/preview/', {
        token: tokens.owner,
        json: { scopes: [scope], targets: [gb({ threshold: 1500 }), gb({ metric: 'depth/bid_2bps', threshold: undefined })] },
      });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.summary).to.deep.equal({ added: 1, modified: 1, removed: 1 });
      const byAction = Object.fromEntries(r.body.changes.map((c: { action: string }) => [c.action, c]));
      expect(byAction.modified).to.deep.include({ existing_id: ids.volume, changed_fields: ['threshold'], used_default_fallback: false });
      expect(byAction.modified.before).to.include({ id: ids.volume, threshold: 1000, organization: w.project });
      expect(byAction.modified.after).to.include({ threshold: 1500 });
      expect(byAction.added).to.deep.include({ existing_id: null, before: null, used_default_fallback: true });
      expect(byAction.added.after).to.include({ metric: 'depth/bid_2bps', threshold: 10000, direction: 'above' });
      expect(byAction.removed).to.deep.include({ existing_id: ids.spread, after: null });
      expect(r.body.batch.delete_ids.sort()).to.deep.equal([ids.volume, ids.spread].sort());
      expect(r.body.batch.create_targets.map((t: { metric: string }) => t.metric).sort()).to.deep.equal(['depth/bid_2bps', 'volume/volume']);
      // Per covered pair and metric asked: the existing target or a default.
      expect(r.body.prefill.default.length).to.equal(3 * 2);
      expect(r.body.prefill.market_hours.sessions).to.have.property('overnight');
      expect((await list('staff')).body).to.deep.equal(before);

      // Saving the preview's batch makes exactly that set.
      const saved = await batch('owner', r.body.batch);
      expect(saved.status, saved.text).to.equal(201);
      const mine = (await list('owner', { target_organizations: w.project, target_assets: w.asset })).body;
      expect(mine.map((t) => [t.metric, t.threshold]).sort()).to.deep.equal([['depth/bid_2bps', 10000], ['volume/volume', 1500]]);
      ids.volume = mine.find((t) => t.metric === 'volume/volume')!.id;
      delete ids.spread;
      ids.bid = mine.find((t) => t.metric === 'depth/bid_2bps')!.id;
    });
    it('takes a form body, and refuses a scope the caller does not manage like an unknown one (403)', async () => {
      const form = await call('POST', '/v2/organizations/targets/preview/', { token: tokens.owner, form: { scopes: JSON.stringify([scope]), targets: JSON.stringify([]) } });
      expect(form.status, form.text).to.equal(200);
      expect((form.body as { summary: object }).summary).to.deep.equal({ added: 0, modified: 0, removed: 2 });
      const other = await call('POST', '/v2/organizations/targets/preview/', { token: tokens.owner, json: { scopes: [{ organization: project2, asset: assetC }], targets: [] } });
      const unknown = await call('POST', '/v2/organizations/targets/preview/', { token: tokens.owner, json: { scopes: [{ organization: 'no-such-org', asset: assetC }], targets: [] } });
      expect(other.status).to.equal(403);
      expect(other.body).to.deep.equal({ detail: TARGET_MESSAGES.organization(project2) });
      expect(unknown.status).to.equal(403);
      expect(unknown.body).to.deep.equal({ detail: TARGET_MESSAGES.organization('no-such-org') });
    });
  });

  describe('list filters, paging and facets', () => {
    it('filters by type, status, metric, market hours and labels; validates assets and organizations', async () => {
      expect((await list('owner', { type: 'mm' })).body.map((t) => t.type)).to.satisfy((xs: string[]) => xs.length === 2 && xs.every((x) => x === 'mm'));
      expect((await list('staff', { statuses: 'stable,alert' })).body.filter((t) => Object.values(ids).includes(t.id))).to.deep.equal([]);
      expect((await list('owner', { metrics: 'volume/volume', types: 'gb' })).body.map((t) => t.id)).to.deep.equal([ids.volume]);
      expect((await list('staff', { asset_labels: 'c-label' })).body.map((t) => t.id)).to.deep.equal([ids.other]);
      expect((await list('owner', { market_hours: 'default', target_organizations: w.mm })).body.length).to.equal(2);
      const bad = await list('maker', { assets: assetC + ',NOPE' });
      expect(bad.status).to.equal(400);
      expect(bad.body).to.have.property('assets');
      const org = await list('maker', { organizations: w.project });
      expect(org.body).to.deep.equal({ organizations: [`"${w.project}" is not one of your organizations.`] });
      expect((await list('owner', { statuses: 'sleeping' })).status).to.equal(400);
    });
    it('pages with {count, page, page_size, results} and counts facets over the whole filtered set', async () => {
      const r = await call<{ count: number; page: number; page_size: number; results: Listed[]; facets: Record<string, Record<string, number>> }>(
        'GET',
        `/v2/organizations/targets/?page=2&page_size=1&include_facets=true&facets=type,status,since,telegram&sort_by=metric&sort_direction=desc`,
        { token: tokens.owner },
      );
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.include({ count: 4, page: 2, page_size: 1 });
      expect(r.body.results.map((t) => t.metric)).to.deep.equal(['volume/volume']);
      expect(r.body.facets).to.deep.equal({ type: { gb: 2, mm: 2 }, status: { unchecked: 4 }, since: { 'under-1h': 4 }, telegram: { false: 4 } });
      const only = await call<{ results: unknown[]; facets: object }>('GET', '/v2/organizations/targets/?facets_only=1&facets=organization', { token: tokens.maker });
      expect(only.body.results).to.deep.equal([]);
      expect(only.body.facets).to.deep.equal({ organization: { [w.mm]: 2 } });
      expect((await list('owner', { page_size: '251' })).status).to.equal(400);
    });
  });
});
