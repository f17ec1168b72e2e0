// RFQ (addendum section 8): an RFQ from draft to award as each role, every field checked,
// the proposals' actions and revisions, the comparison view's figures against values
// computed here from the rows written (price, trusted depth and volume, reported volume),
// sealed RFQs, the deadline and valid_until moves, the award's draft loan and inactive
// targets, and one rfq.events message per change.
import { expect } from 'chai';
import type { KafkaMessage } from 'kafkajs';
import { RFQ_STATE_MESSAGES } from '../../domain/rfq/rfq.ts';
import { RFQ_MESSAGES } from '../../domain/rfq/terms.ts';
import { book, trustedDepth, trustedVolume } from '../../domain/market/families/index.ts';
import { levelIndex, LEVELS_BPS } from '../../domain/market/facts.ts';
import { Rollups } from '../../domain/market/repositories/rollups.ts';
import { NOT_MEASURED } from '../../domain/rfq/track-record.ts';
import { topicName } from '../../lib/kafka.ts';
import { frameHeader } from '../../lib/schema-registry.ts';
import { AgreementEventRelay } from '../../processors/agreements/event-relay.ts';
import { RfqDeadlineKeeper } from '../../processors/rfq/deadline-keeper.ts';
import { AgreementStore } from '../../domain/agreements/store.ts';
import type { RfqBody } from '../../domain/rfq/rfq.ts';
import { call, login, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

describe('RFQ', function () {
  this.timeout(120_000);
  const w = world();
  const mm2 = `mm2-${w.tag}`;
  const mm3 = `mm3-${w.tag}`;
  const project2 = `proj2-${w.tag}`;
  w.fixture.organizations!.push(
    { slug: mm2, name: `Maker two ${w.tag}`, kind: 'market_maker' },
    { slug: mm3, name: `Maker three ${w.tag}`, kind: 'market_maker' },
    { slug: project2, name: `Project two ${w.tag}`, kind: 'project' },
  );
  const more = {
    maker2: { email: `maker2-${w.tag}@test.example`, username: `maker2-${w.tag}`, password: w.password, organizations: [mm2] },
    maker3: { email: `maker3-${w.tag}@test.example`, username: `maker3-${w.tag}`, password: w.password, organizations: [mm3] },
    owner2: { email: `owner2-${w.tag}@test.example`, username: `owner2-${w.tag}`, password: w.password, organizations: [project2] },
  };
  w.fixture.users!.push(...Object.values(more));
  const wallet = w.fixture.wallets![0]!.id;
  const spot = `${w.asset}/USDT`;
  const usd = `${w.asset}/USD`;
  const tokens: Record<string, string> = {};
  const now = Math.floor(Date.now() / MINUTE) * MINUTE;
  const iso = (ms: number) => new Date(ms).toISOString();
  const PRICE = 2;
  // The market maker's measured minutes: 120 of them ending an hour ago, on the spot pair.
  const measured = Array.from({ length: 120 }, (_, i) => now - HOUR - (120 - i) * MINUTE);
  const i2 = levelIndex(2);

  const api = (who: string, method: string, path: string, json?: unknown) => call(method, path, { token: tokens[who], json });
  const rfqBody = (over: Record<string, unknown> = {}) => ({
    asset: w.asset,
    title: 'Market making for the listing',
    description: 'Two venues, 90 days',
    models: ['loan_call_option', 'hybrid'],
    exchanges: [w.ex, w.ex2],
    loan_budget: { quantity: 200_000, quote_amount: 50_000 },
    term_days: 90,
    requirements: [
      { metric: 'depth/bid_2bps', threshold: 1000 },
      { metric: 'spread/spread_bps', exchange: w.ex, threshold: 20 },
    ],
    invited: [w.mm, mm2],
    deadline: iso(now + 2 * DAY),
    ...over,
  });
  const proposalBody = (over: Record<string, unknown> = {}) => ({
    model: 'hybrid',
    loan: {
      quantity: 100_000,
      quote_amount: 10_000,
      tranches: [
        { quantity: 50_000, strike_basis: 'fixed', strike_price: 1.5, expires_after_days: 90 },
        { quantity: 50_000, strike_basis: 'twap_premium', premium_pct: 10, expires_after_days: 180 },
      ],
    },
    retainer_fee_usd_month: 3000,
    interest_rate_pct: 5,
    kpis: [
      { metric: 'depth/bid_2bps', threshold: 1500 },
      { metric: 'spread/spread_bps', threshold: 15 },
    ],
    notes: 'We quote both venues.',
    valid_until: iso(now + 10 * DAY),
    ...over,
  });

  let rfq: number;
  let p1: number;
  let p2: number;

  before(async () => {
    await seed(w.fixture);
    for (const [who, u] of Object.entries({ ...w.users, ...more })) tokens[who] = await login(u.email, w.password);
    const ch = testStack().service.deps.ch;
    // A constant mid on both USD pairs for the last 26 hours: today's price is PRICE.
    const minutes = [];
    for (let m = now - 26 * HOUR; m < now; m += MINUTE) for (const [ex, p] of [[w.ex, spot], [w.ex2, usd]] as const) minutes.push({ exchange: ex, pair: p, minute: m / 1000, samples: 60, mid: PRICE, closed_at: m + MINUTE });
    await ch.insert('book_minutes', minutes);
    const keys = minutes.map((r) => ({ exchange: r.exchange, pair: r.pair, minute: r.minute * 1000 }));
    await new Rollups(ch, book).recompute(keys);
    // Its own orders: 1,000 USD of bids and 2,000 of asks within 2 bps each minute; 100 USD of fills a minute.
    const depth = (v: number) => LEVELS_BPS.map((l) => (l >= 2 ? v : 0));
    await ch.insert('trusted_depth_minutes', measured.map((m) => ({ exchange: w.ex, pair: spot, wallet_id: wallet, minute: m / 1000, mid: PRICE, bid_depth: depth(1000), ask_depth: depth(2000), closed_at: m + MINUTE })));
    // And a fill two minutes ago: measured, but after what the last report covers (its push less the lateness).
    const filled = [...measured, now - 2 * MINUTE];
    await ch.insert('trusted_volume_minutes', filled.map((m) => ({ exchange: w.ex, pair: spot, wallet_id: wallet, minute: m / 1000, fills: 1, amount: 50, volume_usd: 100, usd_fills: 1, closed_at: m + MINUTE })));
    const trustedKeys = filled.map((m) => ({ exchange: w.ex, pair: spot, minute: m }));
    await new Rollups(ch, trustedDepth).recompute(trustedKeys);
    await new Rollups(ch, trustedVolume).recompute(trustedKeys);
    // It reported 15,000 of volume (measured: 12,000) and 1,000 of bid depth, on the days of those minutes.
    const days = [...new Set(measured.map((m) => Math.floor(m / DAY) * DAY))];
    const perDay = (d: number) => measured.filter((m) => Math.floor(m / DAY) * DAY === d).length;
    await ch.insert(
      'mm_reported',
      days.flatMap((d) => [
        { organization: w.mm, asset: w.asset, exchange: w.ex, pair: spot, metric: 'volume/volume', interval: '1d', timestamp: d / 1000, value: 125 * perDay(d), pushed_at: now },
        { organization: w.mm, asset: w.asset, exchange: w.ex, pair: spot, metric: 'depth/bid_2bps', interval: '1d', timestamp: d / 1000, value: 1000, pushed_at: now },
      ]),
    );
  });

  describe('an RFQ from draft to open', () => {
    it('names every invalid field; a market maker may not request proposals', async () => {
      // First the shapes (the contract, api/openapi.yaml), then what the body says against the reference data.
      const shapes = await api('owner', 'POST', '/v2/organizations/rfqs/', {
        ...rfqBody({ title: '', models: ['barter'], term_days: 0 }),
        requirements: [{ metric: 'volume/twap', threshold: 1 }, { metric: 'depth/bid_2bps' }],
      });
      expect(shapes.status).to.equal(400);
      expect(Object.keys(shapes.body)).to.have.members(['title', 'models', 'term_days', 'requirements']);
      expect(shapes.body.requirements).to.deep.equal([{}, { threshold: ['This field is required.'] }]);
      const bad = await api('owner', 'POST', '/v2/organizations/rfqs/', {
        ...rfqBody({ deadline: iso(now - DAY), invited: [w.project], pairs: ['NOPE/USDT'] }),
        requirements: [{ metric: 'volume/twap', threshold: 1 }, { metric: 'depth/bid_2bps', threshold: 1 }],
      });
      expect(bad.status).to.equal(400);
      expect(Object.keys(bad.body)).to.have.members(['deadline', 'invited', 'pairs', 'requirements']);
      expect(bad.body.deadline).to.deep.equal([RFQ_MESSAGES.future]);
      expect(bad.body.invited).to.deep.equal([RFQ_MESSAGES.invited(w.project)]);
      expect(bad.body.requirements).to.deep.equal([{ metric: [RFQ_MESSAGES.metric('volume/twap')] }, {}]);
      const other = await api('owner2', 'POST', '/v2/organizations/rfqs/', rfqBody());
      expect(other.status).to.equal(400);
      expect(other.body).to.deep.equal({ asset: [RFQ_MESSAGES.asset(w.asset)] });
      expect((await api('maker', 'POST', '/v2/organizations/rfqs/', rfqBody())).status).to.equal(403);
      // Whatever it sends: who may not request proposals at all is told so before the body is judged (specification 5.4).
      const badBody = await api('maker', 'POST', '/v2/organizations/rfqs/', { title: '' });
      expect([badBody.status, badBody.body]).to.deep.equal([403, { detail: RFQ_STATE_MESSAGES.noProjects }]);
    });

    it('creates a draft only its project and staff see', async () => {
      const r = await api('owner', 'POST', '/v2/organizations/rfqs/', rfqBody());
      expect(r.status, r.text).to.equal(201);
      rfq = r.body.id;
      expect(r.body).to.deep.include({ status: 'draft', version: 1, sealed: false, awarded_proposal: null, pairs: [spot, usd], invited: [w.mm, mm2].sort() });
      expect(r.body.organization).to.deep.equal({ slug: w.project, name: `Project ${w.tag}` });
      expect(r.body.markets).to.deep.equal([{ exchange: w.ex, pair: spot }, { exchange: w.ex2, pair: usd }]);
      expect(r.body.requirements[0]).to.deep.equal({ metric: 'depth/bid_2bps', exchange: null, pair: null, threshold: 1000, direction: 'above', market_hours: null });
      for (const who of ['maker', 'maker3', 'owner2', 'loner']) expect((await api(who, 'GET', `/v2/organizations/rfqs/${rfq}/`)).status, who).to.equal(404);
      expect((await api('staff', 'GET', `/v2/organizations/rfqs/${rfq}/`)).status).to.equal(200);
      expect((await api('maker', 'GET', '/v2/organizations/rfqs/')).body.map((x: { id: number }) => x.id)).to.not.include(rfq);
    });

    it('a draft is changed by its project only; an unknown id and a hidden one read alike', async () => {
      const r = await api('owner', 'PATCH', `/v2/organizations/rfqs/${rfq}/`, { title: 'Listing MM', term_days: 'x' });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({ term_days: ['A valid integer is required.'] });
      const ok = await api('owner', 'PATCH', `/v2/organizations/rfqs/${rfq}/`, { title: 'Listing MM' });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body).to.include({ title: 'Listing MM', version: 2, status: 'draft' });
      // A PATCH that changes nothing makes no version.
      for (const body of [{}, { title: 'Listing MM' }]) expect((await api('owner', 'PATCH', `/v2/organizations/rfqs/${rfq}/`, body)).body.version).to.equal(2);
      expect((await api('owner2', 'PATCH', `/v2/organizations/rfqs/${rfq}/`, { title: 'x' })).status).to.equal(404);
      expect((await api('owner', 'GET', '/v2/organizations/rfqs/987654321/')).status).to.equal(404);
    });

    it('opens; the invited market makers see it, others do not; a change of an open RFQ names its state', async () => {
      expect((await api('owner', 'POST', `/v2/organizations/rfqs/${rfq}/actions/`, { action: 'publish' })).body).to.have.keys(['action']);
      const r = await api('owner', 'POST', `/v2/organizations/rfqs/${rfq}/actions/`, { action: 'open' });
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.include({ status: 'open', accepting_proposals: true });
      expect(r.body.history.map((h: { status: string }) => h.status)).to.deep.equal(['draft', 'open']);
      expect((await api('maker', 'GET', `/v2/organizations/rfqs/${rfq}/`)).status).to.equal(200);
      expect((await api('maker2', 'GET', '/v2/organizations/rfqs/')).body.map((x: { id: number }) => x.id)).to.include(rfq);
      expect((await api('maker3', 'GET', `/v2/organizations/rfqs/${rfq}/`)).status).to.equal(404);
      const again = await api('owner', 'POST', `/v2/organizations/rfqs/${rfq}/actions/`, { action: 'open' });
      expect(again.status).to.equal(400);
      expect(again.body).to.deep.equal({ message: `Cannot open RFQ ${rfq}: it is open.` });
      const patch = await api('owner', 'PATCH', `/v2/organizations/rfqs/${rfq}/`, { title: 'late' });
      expect(patch.body).to.deep.equal({ message: `RFQ ${rfq} is open: only a draft can be changed.` });
      // Seen, not changed: 403.
      expect((await api('maker', 'POST', `/v2/organizations/rfqs/${rfq}/actions/`, { action: 'close' })).status).to.equal(403);
      expect((await api('maker', 'PATCH', `/v2/organizations/rfqs/${rfq}/`, { title: 'x' })).status).to.equal(403);
      const versions = await api('maker', 'GET', `/v2/organizations/rfqs/${rfq}/versions/`);
      expect(versions.body.map((v: { status: string }) => v.status)).to.deep.equal(['open']);
      expect((await api('owner', 'GET', `/v2/organizations/rfqs/${rfq}/versions/`)).body.map((v: { version: number }) => v.version)).to.deep.equal([1, 2, 3]);
    });

    it('lists with filters and paging', async () => {
      const paged = await api('owner', 'GET', `/v2/organizations/rfqs/?assets=${w.asset}&statuses=open&page=1&page_size=1`);
      expect(paged.body).to.include({ count: 1, page: 1, page_size: 1 });
      expect(paged.body.results[0].id).to.equal(rfq);
      expect((await api('owner', 'GET', '/v2/organizations/rfqs/?statuses=done&page_size=0')).body).to.have.keys(['statuses', 'page_size']);
    });
  });

  describe('proposals', () => {
    it('names every invalid field, nested ones nested', async () => {
      const shape = await api('maker', 'POST', `/v2/organizations/rfqs/${rfq}/proposals/`, proposalBody({ valid_until: 'soon' }));
      expect(shape.status).to.equal(400);
      expect(shape.body).to.deep.equal({ valid_until: ['Enter a valid date-time (ISO 8601, UTC when no offset) or epoch milliseconds.'] });
      const r = await api('maker', 'POST', `/v2/organizations/rfqs/${rfq}/proposals/`, {
        ...proposalBody({ model: 'retainer', exchanges: ['nowhere'] }),
        loan: { quantity: 300_000, tranches: [{ quantity: 1, strike_basis: 'fixed', expires_after_days: 1 }] },
      });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({
        model: [RFQ_MESSAGES.model(['loan_call_option', 'hybrid'])],
        exchanges: [RFQ_MESSAGES.proposalExchange('nowhere')],
        loan: { quantity: ['Ensure this value is less than or equal to 200000.'], tranches: [{ strike_price: [RFQ_MESSAGES.strikePrice] }] },
      });
      const sum = await api('maker', 'POST', `/v2/organizations/rfqs/${rfq}/proposals/`, proposalBody({ loan: { quantity: 100, tranches: [{ quantity: 60, strike_basis: 'twap_premium', premium_pct: 5, expires_after_days: 30 }] } }));
      expect(sum.body).to.deep.equal({ loan: { tranches: [RFQ_MESSAGES.trancheSum] } });
    });

    it('only invited market makers propose, one live proposal each', async () => {
      const a = await api('maker', 'POST', `/v2/organizations/rfqs/${rfq}/proposals/`, proposalBody());
      expect(a.status, a.text).to.equal(201);
      p1 = a.body.id;
      expect(a.body).to.deep.include({ status: 'submitted', version: 1, rfq, market_maker: { slug: w.mm, name: `Maker ${w.tag}` } });
      const twice = await api('maker', 'POST', `/v2/organizations/rfqs/${rfq}/proposals/`, proposalBody());
      expect(twice.body.message).to.match(new RegExp(`already has proposal ${p1}`));
      const b = await api('maker2', 'POST', `/v2/organizations/rfqs/${rfq}/proposals/`, proposalBody({ kpis: [{ metric: 'depth/bid_2bps', exchange: w.ex, threshold: 500 }], retainer_fee_usd_month: 1000, interest_rate_pct: 0 }));
      expect(b.status, b.text).to.equal(201);
      p2 = b.body.id;
      expect((await api('owner', 'POST', `/v2/organizations/rfqs/${rfq}/proposals/`, proposalBody())).status).to.equal(403);
      expect((await api('maker3', 'POST', `/v2/organizations/rfqs/${rfq}/proposals/`, proposalBody())).status).to.equal(404);
    });

    it('a market maker sees only its own; the project sees all, compared', async () => {
      const own = await api('maker', 'GET', `/v2/organizations/rfqs/${rfq}/proposals/`);
      expect(own.body.map((p: { id: number }) => p.id)).to.deep.equal([p1]);
      expect((await api('maker', 'GET', `/v2/organizations/rfqs/${rfq}/proposals/${p2}/`)).status).to.equal(404);
      const all = await api('owner', 'GET', `/v2/organizations/rfqs/${rfq}/proposals/`);
      expect(all.status, all.text).to.equal(200);
      const [a, b] = all.body as Record<string, any>[];
      expect([a!.id, b!.id]).to.deep.equal([p1, p2]);
      expect(a!.price).to.be.closeTo(PRICE, 1e-9);
      // Retainer 3,000 a month over 90 days; 5 % a year on 100,000 tokens at 2 plus 10,000 USD, over 90 days.
      const interest = 0.05 * (100_000 * PRICE + 10_000) * (90 / 365);
      expect(a!.cost.retainer_usd).to.be.closeTo(9_000, 1e-6);
      expect(a!.cost_usd).to.be.closeTo(9_000 + interest, 1e-6);
      expect(b!.cost_usd).to.be.closeTo(3_000, 1e-6);
      // Fixed strike 1.5 below the price 2: 0.5 x 50,000; the premium tranche is out of the money.
      expect(a!.option_value_usd).to.be.closeTo(25_000, 1e-6);
      expect(a!.requirements_met.map((r: { status: string }) => r.status)).to.deep.equal(['met', 'met']);
      expect(b!.requirements_met.map((r: { status: string }) => r.status)).to.deep.equal(['missing', 'missing']);
      // mm2 offers 500 only on the first exchange: weaker there, nothing on the second.
      expect(b!.requirements_met[0].offered).to.deep.equal([
        { exchange: w.ex, pair: spot, threshold: 500 },
        { exchange: w.ex2, pair: usd, threshold: null },
      ]);
      const t = a!.track_record;
      expect(t.assets).to.deep.equal([w.asset]);
      expect(t.depth.bid_2bps).to.be.closeTo(1000, 1e-6);
      expect(t.depth.ask_2bps).to.be.closeTo(2000, 1e-6);
      expect(t.volume_usd).to.be.closeTo(12_100, 1e-6);
      expect(t.spread_bps).to.equal(null);
      expect(t.spread_reason).to.equal(NOT_MEASURED.spread);
      const spotRecord = t.pairs.find((p: { pair: string }) => p.pair === spot);
      expect(spotRecord.quoted_minutes).to.equal(120);
      expect(spotRecord.presence_pct).to.be.closeTo((100 * 120) / spotRecord.market_minutes, 1e-9);
      // As the reconciliation compares them: each report with the minutes it covers (not the last fill).
      expect(t.reported_gap.volume_diff_pct).to.be.closeTo(25, 1e-6);
      expect(t.reported_gap.volume_trusted).to.be.closeTo(12_000, 1e-6);
      expect(t.reported_gap.depth_diff_pct.bid_2bps).to.be.closeTo(0, 1e-6);
      expect(t.reported_gap.overstated_days).to.equal(t.reported_gap.days_compared);
      // mm2 has no wallet: nothing measured.
      expect(b!.track_record.depth.bid_2bps).to.equal(null);
      expect(b!.track_record.pairs).to.deep.equal([]);
    });

    it('revisions keep the earlier versions; shortlist, withdraw and reject by the right side only', async () => {
      const short = await api('owner', 'PATCH', `/v2/organizations/rfqs/${rfq}/proposals/${p1}/`, { action: 'shortlist' });
      expect(short.status, short.text).to.equal(200);
      expect(short.body.status).to.equal('shortlisted');
      expect((await api('maker', 'PATCH', `/v2/organizations/rfqs/${rfq}/proposals/${p1}/`, { action: 'shortlist' })).status).to.equal(403);
      expect((await api('owner', 'PATCH', `/v2/organizations/rfqs/${rfq}/proposals/${p1}/`, { action: 'withdraw' })).status).to.equal(403);
      const bad = await api('maker', 'PATCH', `/v2/organizations/rfqs/${rfq}/proposals/${p1}/`, { action: 'revise', retainer_fee_usd_month: -1 });
      expect(bad.body).to.deep.equal({ retainer_fee_usd_month: ['Ensure this value is greater than or equal to 0.'] });
      const rev = await api('maker', 'PATCH', `/v2/organizations/rfqs/${rfq}/proposals/${p1}/`, { action: 'revise', retainer_fee_usd_month: 2500 });
      expect(rev.status, rev.text).to.equal(200);
      expect(rev.body).to.include({ status: 'submitted', version: 3, retainer_fee_usd_month: 2500 });
      const versions = await api('owner', 'GET', `/v2/organizations/rfqs/${rfq}/proposals/${p1}/versions/`);
      expect(versions.body.map((v: { version: number; status: string; retainer_fee_usd_month: number }) => [v.version, v.status, v.retainer_fee_usd_month])).to.deep.equal([
        [1, 'submitted', 3000],
        [2, 'shortlisted', 3000],
        [3, 'submitted', 2500],
      ]);
      const w2 = await api('maker2', 'PATCH', `/v2/organizations/rfqs/${rfq}/proposals/${p2}/`, { action: 'withdraw' });
      expect(w2.body.status).to.equal('withdrawn');
      const again = await api('owner', 'PATCH', `/v2/organizations/rfqs/${rfq}/proposals/${p2}/`, { action: 'reject' });
      expect(again.status).to.equal(400);
      expect(again.body).to.deep.equal({ message: `Cannot reject proposal ${p2}: it is withdrawn.` });
      expect((await api('owner', 'PATCH', `/v2/organizations/rfqs/${rfq}/proposals/${p2}/`, { action: 'accept' })).body).to.have.keys(['action']);
    });
  });

  describe('the award', () => {
    let third: number;
    it('is the project’s, of a live proposal of this RFQ', async () => {
      const b = await api('maker2', 'POST', `/v2/organizations/rfqs/${rfq}/proposals/`, proposalBody({ kpis: [] }));
      expect(b.status, b.text).to.equal(201);
      third = b.body.id;
      expect((await api('maker', 'POST', `/v2/organizations/rfqs/${rfq}/award/`, { proposal: p1 })).status).to.equal(403);
      expect((await api('owner', 'POST', `/v2/organizations/rfqs/${rfq}/award/`, {})).body).to.deep.equal({ proposal: ['This field is required.'] });
      expect((await api('owner', 'POST', `/v2/organizations/rfqs/${rfq}/award/`, { proposal: 987654 })).body).to.deep.equal({ proposal: [RFQ_STATE_MESSAGES.notOfRfq(987654)] });
      expect((await api('owner', 'POST', `/v2/organizations/rfqs/${rfq}/award/`, { proposal: p2 })).body).to.deep.equal({ message: `Cannot award proposal ${p2}: it is withdrawn.` });
    });

    it('awards: the proposal accepted, the others rejected, a draft loan and inactive mm targets', async () => {
      const r = await api('owner', 'POST', `/v2/organizations/rfqs/${rfq}/award/`, { proposal: p1 });
      expect(r.status, r.text).to.equal(201);
      expect(r.body.rfq).to.include({ status: 'awarded', awarded_proposal: p1, loan: r.body.loan.id });
      expect(r.body.proposal.status).to.equal('accepted');
      expect(r.body.rejected).to.deep.equal([third]);
      // Two KPIs without exchange, on both pairs of the proposal's exchanges.
      expect(r.body.targets).to.have.length(4);
      expect(r.body.skipped_targets).to.deep.equal([]);
      const loan = await api('owner', 'GET', `/v2/organizations/loans/${r.body.loan.id}/`);
      expect(loan.status, loan.text).to.equal(200);
      expect(loan.body).to.deep.include({ status: 'draft', asset: w.asset, model: 'hybrid', quantity: 100_000, quote_amount: 10_000, retainer_fee_usd_month: 2500, interest_rate_pct: 5, settlement_asset: 'USDT', rfq });
      expect(loan.body.market_maker.slug).to.equal(w.mm);
      expect(loan.body.tranches.map((t: { quantity: number; strike_basis: string; strike_price: number | null }) => [t.quantity, t.strike_basis, t.strike_price])).to.deep.equal([
        [50_000, 'fixed', 1.5],
        [50_000, 'twap_premium', null],
      ]);
      expect(Date.parse(loan.body.end_date) - Date.parse(loan.body.start_date)).to.equal(90 * DAY);
      const targets = await api('owner', 'GET', `/v2/organizations/targets/?target_organizations=${w.mm}&target_assets=${w.asset}`);
      const mine = targets.body.filter((t: { id: number }) => r.body.targets.some((x: { id: number }) => x.id === t.id));
      expect(mine).to.have.length(4);
      for (const t of mine) expect(t).to.include({ type: 'mm', active: false });
      expect((await api('maker2', 'GET', `/v2/organizations/rfqs/${rfq}/proposals/${third}/`)).body.status).to.equal('rejected');
      const again = await api('owner', 'POST', `/v2/organizations/rfqs/${rfq}/award/`, { proposal: p1 });
      expect(again.body).to.deep.equal({ message: `Cannot award RFQ ${rfq}: it is awarded.` });
      // The KPI targets go active with the loan, and are its KPI.
      const activated = await api('owner', 'POST', `/v2/organizations/loans/${r.body.loan.id}/actions/`, { action: 'activate' });
      expect(activated.body.status, activated.text).to.equal('active');
      expect(activated.body.kpi.targets).to.equal(4);
      const on = (await api('owner', 'GET', `/v2/organizations/targets/?target_organizations=${w.mm}&target_assets=${w.asset}`)).body.filter((t: { id: number }) => r.body.targets.some((x: { id: number }) => x.id === t.id));
      expect(on.map((t: { active: boolean }) => t.active)).to.deep.equal([true, true, true, true]);
    });

    it('a second award on the same pairs does not make a target twice, and says so', async () => {
      const q = await api('owner', 'POST', '/v2/organizations/rfqs/', rfqBody({ requirements: [] }));
      await api('owner', 'POST', `/v2/organizations/rfqs/${q.body.id}/actions/`, { action: 'open' });
      const p = await api('maker', 'POST', `/v2/organizations/rfqs/${q.body.id}/proposals/`, proposalBody({ kpis: [{ metric: 'depth/bid_2bps', exchange: w.ex, threshold: 1 }] }));
      const r = await api('owner', 'POST', `/v2/organizations/rfqs/${q.body.id}/award/`, { proposal: p.body.id });
      expect(r.status, r.text).to.equal(201);
      expect(r.body.targets).to.deep.equal([]);
      expect(r.body.skipped_targets).to.have.length(1);
      expect(r.body.skipped_targets[0]).to.include({ exchange: w.ex, pair: spot, metric: 'depth/bid_2bps' });
    });

    it('a KPI on every market and another on one make one target a market, the strictest; two directions on one market are refused', async () => {
      const q = await api('owner', 'POST', '/v2/organizations/rfqs/', rfqBody({ requirements: [{ metric: 'spread/spread_bps', threshold: 20 }] }));
      await api('owner', 'POST', `/v2/organizations/rfqs/${q.body.id}/actions/`, { action: 'open' });
      const propose = (kpis: unknown[]) => api('maker2', 'POST', `/v2/organizations/rfqs/${q.body.id}/proposals/`, proposalBody({ kpis }));
      const opposite = await propose([
        { metric: 'spread/spread_bps', threshold: 10 },
        { metric: 'spread/spread_bps', exchange: w.ex, threshold: 15, direction: 'above' },
      ]);
      expect(opposite.status).to.equal(400);
      expect(opposite.body).to.deep.equal({ kpis: [{}, { non_field_errors: [RFQ_MESSAGES.oppositeKpi(w.ex, spot)] }] });
      const p = await propose([
        { metric: 'spread/spread_bps', threshold: 10 },
        { metric: 'spread/spread_bps', exchange: w.ex, threshold: 30 },
      ]);
      expect(p.status, p.text).to.equal(201);
      const compared = await api('owner', 'GET', `/v2/organizations/rfqs/${q.body.id}/proposals/`);
      const offered = compared.body.find((x: { id: number }) => x.id === p.body.id).requirements_met[0].offered;
      expect(offered.map((o: { threshold: number }) => o.threshold)).to.deep.equal([10, 10]);
      const r = await api('owner', 'POST', `/v2/organizations/rfqs/${q.body.id}/award/`, { proposal: p.body.id });
      expect(r.status, r.text).to.equal(201);
      expect(r.body.targets.map((t: { exchange: string; threshold: number; direction: string }) => [t.exchange, t.threshold, t.direction]).sort()).to.deep.equal([
        [w.ex, 10, 'below'],
        [w.ex2, 10, 'below'],
      ]);
    });
  });

  describe('the clock', () => {
    it('a sealed RFQ shows its proposals to the project only after the deadline, which closes it', async () => {
      const q = await api('owner', 'POST', '/v2/organizations/rfqs/', rfqBody({ sealed: true, deadline: iso(Date.now() + 4_000) }));
      const id = q.body.id;
      await api('owner', 'POST', `/v2/organizations/rfqs/${id}/actions/`, { action: 'open' });
      const p = await api('maker', 'POST', `/v2/organizations/rfqs/${id}/proposals/`, proposalBody());
      expect(p.status, p.text).to.equal(201);
      const hidden = await api('owner', 'GET', `/v2/organizations/rfqs/${id}/proposals/`);
      expect(hidden.status).to.equal(403);
      expect((await api('owner', 'GET', `/v2/organizations/rfqs/${id}/proposals/${p.body.id}/`)).status).to.equal(404);
      expect((await api('owner', 'POST', `/v2/organizations/rfqs/${id}/award/`, { proposal: p.body.id })).body.message).to.match(/sealed until/);
      expect((await api('staff', 'GET', `/v2/organizations/rfqs/${id}/proposals/`)).body).to.have.length(1);
      const closed = await waitFor('the deadline', async () => {
        const r = await api('owner', 'GET', `/v2/organizations/rfqs/${id}/`);
        return r.body.status === 'closed' && r.body;
      });
      expect(closed.history.map((h: { status: string; by: number }) => [h.status, h.by])).to.deep.equal([
        ['draft', closed.history[0].by],
        ['open', closed.history[0].by],
        ['closed', 0],
      ]);
      expect((await api('owner', 'GET', `/v2/organizations/rfqs/${id}/proposals/`)).body.map((x: { id: number }) => x.id)).to.deep.equal([p.body.id]);
      const late = await api('maker2', 'POST', `/v2/organizations/rfqs/${id}/proposals/`, proposalBody());
      expect(late.body).to.deep.equal({ message: `RFQ ${id} is closed: proposals are not accepted.` });
    });

    it('a proposal past valid_until expires; cancel ends an RFQ', async () => {
      const q = await api('owner', 'POST', '/v2/organizations/rfqs/', rfqBody());
      const id = q.body.id;
      await api('owner', 'POST', `/v2/organizations/rfqs/${id}/actions/`, { action: 'open' });
      const p = await api('maker', 'POST', `/v2/organizations/rfqs/${id}/proposals/`, proposalBody({ valid_until: iso(Date.now() + 2_000) }));
      expect(p.status, p.text).to.equal(201);
      await waitFor('the expiry', async () => (await api('maker', 'GET', `/v2/organizations/rfqs/${id}/proposals/${p.body.id}/`)).body.status === 'expired');
      const c = await api('owner', 'POST', `/v2/organizations/rfqs/${id}/actions/`, { action: 'cancel' });
      expect(c.body.status).to.equal('cancelled');
      expect((await api('owner', 'POST', `/v2/organizations/rfqs/${id}/actions/`, { action: 'close' })).body).to.deep.equal({ message: `Cannot close RFQ ${id}: it is cancelled.` });
    });
  });

  describe('reads never write', () => {
    it('an RFQ past its deadline reads closed, with that version listed, before anything writes it; the next change writes it first', async () => {
      const deadline = Date.now() + 1_500;
      const q = await api('owner', 'POST', '/v2/organizations/rfqs/', rfqBody({ deadline: iso(deadline) }));
      const id = q.body.id;
      await api('owner', 'POST', `/v2/organizations/rfqs/${id}/actions/`, { action: 'open' });
      const p = await api('maker', 'POST', `/v2/organizations/rfqs/${id}/proposals/`, proposalBody({ valid_until: iso(deadline) }));
      expect(p.status, p.text).to.equal(201);
      const closed = await waitFor('the deadline', async () => {
        const r = await api('maker', 'GET', `/v2/organizations/rfqs/${id}/`);
        return r.body.status === 'closed' && r.body;
      });
      expect(closed.history.at(-1)).to.deep.equal({ status: 'closed', at: iso(deadline), by: 0 });
      expect((await api('maker', 'GET', `/v2/organizations/rfqs/${id}/proposals/${p.body.id}/`)).body.status).to.equal('expired');
      const versions = await api('owner', 'GET', `/v2/organizations/rfqs/${id}/versions/`);
      expect(versions.body.map((v: { version: number; status: string }) => [v.version, v.status])).to.deep.equal([
        [1, 'draft'],
        [2, 'open'],
        [3, 'closed'],
      ]);
      const pv = await api('maker', 'GET', `/v2/organizations/rfqs/${id}/proposals/${p.body.id}/versions/`);
      expect(pv.body.map((v: { status: string }) => v.status)).to.deep.equal(['submitted', 'expired']);
      // No keeper runs in the test service: the reads wrote nothing.
      const store = new AgreementStore(testStack().service.deps.ch);
      expect((await store.one('rfq', id))?.status).to.equal('open');
      expect((await store.one('proposal', p.body.id))?.status).to.equal('submitted');
      const cancelled = await api('owner', 'POST', `/v2/organizations/rfqs/${id}/actions/`, { action: 'cancel' });
      expect(cancelled.body.status, cancelled.text).to.equal('cancelled');
      expect((await store.versions('rfq', id)).map((v) => [v.version, v.status, v.changed_by === 0])).to.deep.equal([
        [1, 'draft', false],
        [2, 'open', false],
        [3, 'closed', true],
        [4, 'cancelled', false],
      ]);
      expect((await store.one('proposal', p.body.id))?.status).to.equal('expired');
    });
  });

  describe('the deadline keeper', () => {
    it('closes an RFQ at its deadline and expires a proposal without any request, as the service (by 0)', async () => {
      const q = await api('owner', 'POST', '/v2/organizations/rfqs/', rfqBody({ deadline: iso(Date.now() + 3_000) }));
      const id = q.body.id;
      await api('owner', 'POST', `/v2/organizations/rfqs/${id}/actions/`, { action: 'open' });
      // Staff propose for a market maker they name.
      const p = await api('staff', 'POST', `/v2/organizations/rfqs/${id}/proposals/`, proposalBody({ market_maker: mm2, valid_until: iso(Date.now() + 2_000) }));
      expect(p.status, p.text).to.equal(201);
      expect(p.body.market_maker.slug).to.equal(mm2);
      const { service, log } = testStack();
      const store = new AgreementStore(service.deps.ch);
      const keeper = new RfqDeadlineKeeper({ ch: service.deps.ch, locks: service.deps.locks, log, now: () => Date.now() });
      await waitFor('the keeper to close it', async () => {
        await keeper.runOnce();
        return (await store.one('rfq', id))?.status === 'closed';
      });
      const rfqVersion = (await store.one<RfqBody>('rfq', id))!;
      expect(rfqVersion.changed_by).to.equal(0);
      expect(rfqVersion.body.history.at(-1)).to.include({ status: 'closed', by: 0 });
      expect((await store.one('proposal', p.body.id))?.status).to.equal('expired');
      // Nothing more is due: the next run writes nothing.
      expect(await keeper.runOnce()).to.equal(0);
    });
  });

  describe('events', () => {
    it('rfq.events: the relay publishes one message per change', async () => {
      const { service, kafka, config, log } = testStack();
      const producer = kafka.producer();
      await producer.connect();
      const header = (t: 'loans.events' | 'rfq.events') => frameHeader(service.schemaIds.get(t)!);
      const relay = new AgreementEventRelay(service.deps.ch, producer, { loans: { topic: topicName(config, 'loans.events'), header: header('loans.events') }, rfq: { topic: topicName(config, 'rfq.events'), header: header('rfq.events') } }, log, () => Date.now());
      await relay.runOnce();
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: `rfq-events-${w.tag}` });
      const seen: { event_id: string; type: string; id: number; rfq: number; status: string }[] = [];
      await consumer.connect();
      await consumer.subscribe({ topic: topicName(config, 'rfq.events'), fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }: { message: KafkaMessage }) => void seen.push(JSON.parse(message.value!.subarray(5).toString()) as (typeof seen)[number]) });
      try {
        await waitFor('the awarded RFQ event', async () => seen.some((e) => e.type === 'rfq' && e.id === rfq && e.status === 'awarded'));
      } finally {
        await consumer.disconnect();
      }
      const mine = seen.filter((e) => e.rfq === rfq);
      expect(new Set(mine.map((e) => e.event_id)).size).to.equal(mine.length);
      expect(mine.filter((e) => e.type === 'rfq').map((e) => e.status)).to.deep.equal(['draft', 'draft', 'open', 'awarded']);
      expect(mine.filter((e) => e.type === 'proposal' && e.id === p1).map((e) => e.status)).to.deep.equal(['submitted', 'shortlisted', 'submitted', 'accepted']);
    });
  });
});
