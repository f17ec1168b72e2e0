// Loans (addendum section 7): creating and changing a draft with every field checked, the
// actions of the state machine and the service's own moves (settlement due, the strike of
// a twap_premium tranche), start_twap, valuation and KPI against values computed here from
// the minutes written, what each role sees and may do, the list's filters and paging, and
// one loans.events message per change.
import { expect } from 'chai';
import type { KafkaMessage } from 'kafkajs';
import { CHANGE_MESSAGES } from '../../domain/loans/commands.ts';
import { LOAN_MESSAGES } from '../../domain/loans/terms.ts';
import { ACTION_MESSAGES } from '../../domain/loans/actions.ts';
import { topicName } from '../../lib/kafka.ts';
import { AgreementEventRelay } from '../../processors/agreements/event-relay.ts';
import { LoanKeeper } from '../../processors/loans/keeper.ts';
import { loanKey, scaling } from '../../domain/targets/scaling.ts';
import { TargetRepository, type Target } from '../../domain/targets/repository.ts';
import { AgreementStore } from '../../domain/agreements/store.ts';
import { loanOf, loanRecord, type LoanRecord } from '../../domain/loans/loan.ts';
import { frameHeader } from '../../lib/schema-registry.ts';
import { call, login, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';
import { RolledUp, RollupMarks } from '../../domain/market/repositories/rollup-marks.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

type Shown = {
  id: number;
  status: string;
  version?: number;
  organization: { slug: string };
  market_maker: { slug: string };
  start_twap: number | null;
  tranches: { id: number; strike_price: number | null; settlement: string | null; settled_quantity: number | null }[];
  history: { status: string; by: number }[];
  valuation: { as_of: string; price: number | null; tokens_out: number; value_usd: number | null; intrinsic_value_usd: number | null; tranches: { id: number; intrinsic_value_usd: number | null; days_to_expiry: number }[] };
  kpi: { targets: number; evaluations: number; met: number; met_share: number | null };
  interest_rate_pct: number;
};

describe('loans', function () {
  this.timeout(120_000);
  const w = world();
  const project2 = `proj2-${w.tag}`;
  w.fixture.organizations!.push({ slug: project2, name: `Project two ${w.tag}`, kind: 'project' });
  const owner2 = { email: `owner2-${w.tag}@test.example`, username: `owner2-${w.tag}`, password: w.password, organizations: [project2] };
  w.fixture.users!.push(owner2);
  w.fixture.assets!.push({ symbol: `C${w.tag.toUpperCase()}`, name: 'C', owner: project2 });
  const spot = `${w.asset}/USDT`;
  const usd = `${w.asset}/USD`;
  const tokens: Record<string, string> = {};
  // Whole minutes: the market history below is written up to `now`.
  const now = Math.floor(Date.now() / MINUTE) * MINUTE;
  const start = Math.floor((now - 2 * DAY) / HOUR) * HOUR + 17 * MINUTE;
  const iso = (ms: number) => new Date(ms).toISOString();
  // A mid for every minute of the last 10 days on both USD pairs, different per pair.
  // A minute a test writes late has three times its mid, so that it shows in a TWAP.
  const late = new Set<number>();
  const mid = (pair: string, m: number) => ((pair === spot ? 2 : 2.5) + ((m / MINUTE) % 97) / 100) * (late.has(m) ? 3 : 1);
  // Minutes are written up to here (a test writes one more).
  let writtenTo = now;
  // Minutes that start in [from, to) (rounded up to whole minutes, as the service tiles a window) and were written.
  const twap = (from: number, to: number) => {
    let s = 0;
    let n = 0;
    const end = Math.min(Math.ceil(to / MINUTE) * MINUTE, writtenTo);
    for (let m = Math.ceil(from / MINUTE) * MINUTE; m < end; m += MINUTE) {
      for (const p of [spot, usd]) {
        s += mid(p, m);
        n += 1;
      }
    }
    return s / n;
  };
  const terms = (over: Record<string, unknown> = {}) => ({
    market_maker: w.mm,
    asset: w.asset,
    model: 'hybrid',
    quantity: 1000,
    quote_amount: 5000,
    retainer_fee_usd_month: 8000,
    interest_rate_pct: 2,
    settlement_asset: 'USDT',
    collateral: { asset: 'USDT', amount: 1000 },
    exchanges: [w.ex, w.ex2],
    pairs: [spot, usd],
    start_date: iso(start),
    end_date: iso(now + 60 * DAY),
    tranches: [
      { quantity: 600, strike_basis: 'fixed', strike_price: 1.5, expires_at: iso(now + 10 * DAY) },
      { quantity: 400, strike_basis: 'twap_premium', premium_pct: 10, disbursed_at: iso(now - 9 * DAY), expires_at: iso(now + 20 * DAY) },
    ],
    ...over,
  });
  const post = (who: string, json: unknown) => call<Shown>('POST', '/v2/organizations/loans/', { token: tokens[who], json });
  const get = (who: string, id: number) => call<Shown>('GET', `/v2/organizations/loans/${id}/`, { token: tokens[who] });
  const patch = (who: string, id: number, json: unknown) => call<Shown>('PATCH', `/v2/organizations/loans/${id}/`, { token: tokens[who], json });
  const act = (who: string, id: number, json: unknown) => call<Shown>('POST', `/v2/organizations/loans/${id}/actions/`, { token: tokens[who], json });
  const list = (who: string, q: Record<string, string> = {}) => call<Shown[]>('GET', `/v2/organizations/loans/?${new URLSearchParams(q)}`, { token: tokens[who] });
  const keeper = (clock: number) => {
    const { service, log } = testStack();
    return new LoanKeeper({ ch: service.deps.ch, locks: service.deps.locks, pairs: async () => (await service.deps.referenceLists.lists()).pairs, log, now: () => clock, latenessMs: service.deps.config.latenessMs, rolledUp: new RolledUp(new RollupMarks(service.deps.ch), () => clock) });
  };
  let loan: number;

  before(async () => {
    await seed(w.fixture);
    for (const [who, u] of Object.entries({ ...w.users, owner2 })) tokens[who] = await login(u.email, w.password);
    // Ten days of minutes with their hour and day rollups, as the processors keep them.
    const ch = testStack().service.deps.ch;
    const from = now - 10 * DAY;
    const rows = [];
    for (let m = from; m < now; m += MINUTE) for (const [ex, p] of [[w.ex, spot], [w.ex2, usd]] as const) rows.push({ exchange: ex, pair: p, minute: m / 1000, samples: 60, mid: mid(p, m), closed_at: m + MINUTE });
    await ch.insert('book_minutes', rows);
    const pairs = [w.ex, w.ex2];
    await ch.command(
      `INSERT INTO book_hours (exchange, pair, bucket, minutes, samples, mid_sum, computed_at)
       SELECT exchange, pair, toStartOfHour(minute), count(), sum(samples), sum(mid), now64(3) FROM book_minutes FINAL WHERE exchange IN {ex:Array(String)} GROUP BY exchange, pair, toStartOfHour(minute)`,
      { ex: pairs },
    );
    await ch.command(
      `INSERT INTO book_days (exchange, pair, bucket, minutes, samples, mid_sum, computed_at)
       SELECT exchange, pair, toStartOfDay(minute), count(), sum(samples), sum(mid), now64(3) FROM book_minutes FINAL WHERE exchange IN {ex:Array(String)} GROUP BY exchange, pair, toStartOfDay(minute)`,
      { ex: pairs },
    );
  });

  describe('creating', () => {
    it('names every missing or invalid field, and writes nothing', async () => {
      const before = (await list('staff')).body.length;
      const r = await post('owner', { model: 'lease', quantity: -1, exchanges: [], tranches: [] });
      expect(r.status).to.equal(400);
      expect(r.body).to.have.keys('asset', 'market_maker', 'model', 'quantity', 'exchanges', 'pairs', 'start_date', 'end_date', 'tranches');
      expect((r.body as unknown as Record<string, string[]>).model).to.deep.equal([LOAN_MESSAGES.choice(['loan_call_option', 'retainer', 'hybrid'])]);
      expect((await list('staff')).body.length).to.equal(before);
    });

    it('checks the terms against each other: tranches add up, a hybrid has a fee, pairs are the asset\'s on a listed exchange, the end after the start', async () => {
      const r = await post('owner', terms({ quantity: 900, retainer_fee_usd_month: 0, pairs: [spot, `${w.other}/USDT`], exchanges: [w.ex], end_date: iso(start - DAY) }));
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({
        retainer_fee_usd_month: [LOAN_MESSAGES.retainerFee],
        pairs: [LOAN_MESSAGES.pair(`${w.other}/USDT`)],
        end_date: [LOAN_MESSAGES.endAfterStart],
        tranches: [LOAN_MESSAGES.trancheSum(1000, 900)],
      });
      // First the shapes (the contract), then the terms against each other.
      const shape = await post('owner', terms({ tranches: [{ quantity: 1000, strike_basis: 'fixed', expires_at: 'tomorrow' }] }));
      expect(shape.body).to.deep.equal({ tranches: [{ expires_at: [LOAN_MESSAGES.dateTime] }] });
      const t = await post('owner', terms({ tranches: [{ quantity: 1000, strike_basis: 'fixed', expires_at: iso(start + 90 * DAY) }] }));
      expect(t.body).to.deep.equal({ tranches: [{ strike_price: [LOAN_MESSAGES.strikePrice] }] });
      // A tranche's settlement is the service's (settle_tranche): refused as read-only fields are.
      const settled = await post('owner', terms({ tranches: [{ quantity: 1000, strike_basis: 'fixed', strike_price: 2, expires_at: iso(start + 90 * DAY), settlement: 'returned', settled_quantity: 1000 }] }));
      expect(settled.body).to.deep.equal({ tranches: [{ settlement: ['This field is not accepted here (unknown or read-only).'], settled_quantity: ['This field is not accepted here (unknown or read-only).'] }] });
      // An exchange without a pair of the asset is no market to make, as in a request.
      const noPair = await post('owner', terms({ asset: w.other, exchanges: [w.ex, w.ex2], pairs: [`${w.other}/USDT`] }));
      expect(noPair.body).to.deep.equal({ exchanges: [LOAN_MESSAGES.exchange(w.ex2)] });
      // A premium below 0 is a discount, as a proposal may offer it; -100 would be no strike.
      const tranche = { quantity: 1000, strike_basis: 'twap_premium', expires_at: iso(start + 90 * DAY) };
      expect((await post('owner', terms({ tranches: [{ ...tranche, premium_pct: -100 }] }))).status).to.equal(400);
      // Shapes are checked first, then the terms: only the end is refused (and nothing written).
      const discount = await post('owner', terms({ end_date: iso(start - DAY), tranches: [{ ...tranche, premium_pct: -20 }] }));
      expect(discount.body).to.deep.equal({ end_date: [LOAN_MESSAGES.endAfterStart] });
    });

    it('lends only what the caller\'s project owns: another project gets a field error, a market maker 403', async () => {
      expect((await post('owner2', terms())).body).to.deep.equal({ asset: [LOAN_MESSAGES.asset(w.asset)] });
      const m = await post('maker', terms());
      expect(m.status).to.equal(403);
      expect(m.body).to.deep.equal({ detail: CHANGE_MESSAGES.notLender });
      // Whatever it sends: who may not lend at all is told so before the body is judged (specification 5.4).
      const bad = await post('maker', { quantity: 0 });
      expect([bad.status, bad.body]).to.deep.equal([403, { detail: CHANGE_MESSAGES.notLender }]);
    });

    it('creates a draft with its history, tranche ids and a null strike for a twap_premium tranche', async () => {
      const r = await post('owner', terms());
      expect(r.status, r.text).to.equal(201);
      loan = r.body.id;
      expect(r.body).to.include({ status: 'draft', start_twap: null });
      expect(r.body.organization.slug).to.equal(w.project);
      expect(r.body.market_maker.slug).to.equal(w.mm);
      expect(r.body.tranches.map((t) => [t.id, t.strike_price, t.settlement])).to.deep.equal([
        [1, 1.5, null],
        [2, null, null],
      ]);
      expect(r.body.history.map((h) => h.status)).to.deep.equal(['draft']);
      // Nothing is out before activation.
      expect(r.body.valuation).to.include({ tokens_out: 0, value_usd: 0 });
    });
  });

  describe('who sees and changes a loan', () => {
    it('the lender and the market maker see it, staff too; others get 404 and an empty list', async () => {
      for (const who of ['owner', 'maker', 'staff']) expect((await get(who, loan)).status, who).to.equal(200);
      for (const who of ['owner2', 'loner']) {
        expect((await get(who, loan)).status, who).to.equal(404);
        expect((await list(who)).body.map((l) => l.id), who).to.not.include(loan);
      }
      expect((await get('owner', 99_999_999)).status).to.equal(404);
    });
    it('the market maker reads but may not change it (403); others may not learn it exists (404)', async () => {
      expect((await patch('maker', loan, { interest_rate_pct: 1 })).status).to.equal(403);
      expect((await act('maker', loan, { action: 'activate' })).status).to.equal(403);
      expect((await patch('owner2', loan, { interest_rate_pct: 1 })).status).to.equal(404);
      expect((await act('loner', loan, { action: 'cancel' })).status).to.equal(404);
    });
  });

  describe('the state machine', () => {
    it('a draft takes a PATCH checked as a whole', async () => {
      expect((await patch('owner', loan, { quantity: 2000 })).body).to.deep.equal({ tranches: [LOAN_MESSAGES.trancheSum(1000, 2000)] });
      const r = await patch('owner', loan, { interest_rate_pct: 3 });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.interest_rate_pct).to.equal(3);
      // A PATCH that changes nothing makes no version.
      for (const body of [{}, { interest_rate_pct: 3 }]) expect((await patch('owner', loan, body)).body.version).to.equal(r.body.version);
    });

    it('an action the status does not allow is a 400 naming the status; an unknown action names the field', async () => {
      const r = await act('owner', loan, { action: 'default' });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({ message: ACTION_MESSAGES.notInState('default', 'draft') });
      expect((await act('owner', loan, { action: 'explode' })).body).to.have.key('action');
      expect((await act('owner', loan, {})).body).to.deep.equal({ action: ['This field is required.'] });
    });

    it('activation records start_twap: the TWAP of the 7 days before the start over all USD pairs', async () => {
      const r = await act('owner', loan, { action: 'activate' });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.status).to.equal('active');
      expect(r.body.start_twap).to.be.closeTo(twap(start - 7 * DAY, start), 1e-9);
      expect(r.body.history.map((h) => h.status)).to.deep.equal(['draft', 'active']);
      expect((await patch('owner', loan, { interest_rate_pct: 1 })).body).to.deep.equal({ message: CHANGE_MESSAGES.onlyDraft('active') });
    });

    it('a loan cannot be activated before its start_date', async () => {
      const later = await post('owner', terms({ start_date: iso(now + DAY) }));
      const r = await act('owner', later.body.id, { action: 'activate' });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({ message: ACTION_MESSAGES.beforeStart(iso(now + DAY)) });
      expect((await act('owner', later.body.id, { action: 'cancel' })).body.status).to.equal('cancelled');
    });

    it('the valuation prices the tokens out and the tranches at the 24-hour TWAP', async () => {
      const r = await get('owner', loan);
      const asOf = Date.parse(r.body.valuation.as_of);
      const price = twap(asOf - DAY, asOf);
      expect(r.body.valuation.price).to.be.closeTo(price, 1e-9);
      expect(r.body.valuation.tokens_out).to.equal(1000);
      expect(r.body.valuation.value_usd).to.be.closeTo(1000 * price, 1e-6);
      expect(r.body.valuation.tranches[0]!.intrinsic_value_usd).to.be.closeTo(Math.max(0, price - 1.5) * 600, 1e-6);
      // The twap_premium strike is not fixed until the keeper runs.
      expect(r.body.valuation.tranches[1]!.intrinsic_value_usd).to.equal(null);
      expect(r.body.valuation.tranches[0]!.days_to_expiry).to.be.closeTo((now + 10 * DAY - asOf) / DAY, 1e-9);
    });

    it('the keeper fixes a twap_premium strike once its 7 days have passed, then moves the loan to settlement_due at the last expiry', async () => {
      await keeper(now).runOnce();
      const fixed = (await get('owner', loan)).body;
      expect(fixed.status).to.equal('active');
      expect(fixed.tranches[1]!.strike_price).to.be.closeTo(twap(now - 9 * DAY, now - 2 * DAY) * 1.1, 1e-9);
      expect(await keeper(now + 10 * DAY).runOnce()).to.have.length(0);
      await keeper(now + 20 * DAY).runOnce();
      const due = (await get('owner', loan)).body;
      expect(due.status).to.equal('settlement_due');
      expect(due.history.at(-1)).to.deep.include({ status: 'settlement_due', by: 0 });
    });

    it('a strike, and a start_twap recorded at the start, wait until every minute of their days is written', async () => {
      const { service } = testStack();
      const lateness = service.deps.config.latenessMs;
      // Days ending after the last minute written: the minute from `now` is still to arrive.
      const end = now + MINUTE;
      const tranche = { quantity: 1000, strike_basis: 'twap_premium', premium_pct: 10, disbursed_at: iso(end - 7 * DAY), expires_at: iso(now + 20 * DAY) };
      const id = (await post('owner', terms({ start_date: iso(end), tranches: [tranche] }))).body.id;
      // As activated at its start, before that minute came.
      const store = new AgreementStore(service.deps.ch);
      const draft = loanOf((await store.one<LoanRecord['body']>('loan', id))!);
      const early = twap(end - 7 * DAY, end);
      await store.write([loanRecord({ ...draft, status: 'active', version: draft.version + 1, start_twap: early, start_twap_at: end, history: [...draft.history, { status: 'active', at: end, by: 0 }] }, { at: end, by: 0 })]);
      const shown = async () => (await get('owner', id)).body;
      // Within the lateness of the days' end: neither is touched.
      expect((await keeper(end + lateness).runOnce()).map((l) => l.id)).to.not.include(id);
      expect((await shown()).tranches[0]!.strike_price).to.equal(null);
      const ch = service.deps.ch;
      late.add(now);
      writtenTo = now + MINUTE;
      await ch.insert('book_minutes', [[w.ex, spot], [w.ex2, usd]].map(([ex, p]) => ({ exchange: ex, pair: p, minute: now / 1000, samples: 60, mid: mid(p!, now), closed_at: now + MINUTE })));
      const all = twap(end - 7 * DAY, end);
      expect(all - early).to.be.greaterThan(1e-6);
      // Once it may no longer come: both from every minute of the 7 days, once.
      expect((await keeper(end + lateness + MINUTE).runOnce()).map((l) => l.id)).to.include(id);
      const fixed = await shown();
      expect(fixed.start_twap).to.be.closeTo(all, 1e-9);
      expect(fixed.tranches[0]!.strike_price).to.be.closeTo(all * 1.1, 1e-9);
      expect((await keeper(end + lateness + 2 * MINUTE).runOnce()).map((l) => l.id)).to.not.include(id);
      expect((await shown()).version).to.equal(fixed.version);
      await act('owner', id, { action: 'recall' });
    });

    it('tranches are settled one by one; a settled one is refused again; default ends a due loan', async () => {
      const shape = await act('owner', loan, { action: 'settle_tranche', tranche_id: 7, settlement: 'burned' });
      expect(shape.body).to.deep.equal({ settlement: ['Not a valid choice; expected one of: returned, exercised.'] });
      const bad = await act('owner', loan, { action: 'settle_tranche', tranche_id: 7, settlement: 'returned' });
      expect(bad.body).to.deep.equal({ tranche_id: [ACTION_MESSAGES.trancheId] });
      const one = await act('owner', loan, { action: 'settle_tranche', tranche_id: 1, settlement: 'returned', settled_quantity: 600 });
      expect(one.status, one.text).to.equal(200);
      expect(one.body.status).to.equal('settlement_due');
      expect(one.body.valuation.tokens_out).to.equal(400);
      expect((await act('owner', loan, { action: 'settle_tranche', tranche_id: 1, settlement: 'returned' })).body).to.deep.equal({ tranche_id: [ACTION_MESSAGES.trancheSettled] });
      const d = await act('owner', loan, { action: 'default' });
      expect(d.body.status).to.equal('defaulted');
      expect(d.body.history.map((h) => h.status)).to.deep.equal(['draft', 'active', 'settlement_due', 'defaulted']);
    });

    it('settling every tranche settles the loan; recall takes an active one back', async () => {
      const a = (await post('owner', terms())).body.id;
      await act('owner', a, { action: 'activate' });
      await act('owner', a, { action: 'settle_tranche', tranche_id: 1, settlement: 'exercised' });
      const s = await act('owner', a, { action: 'settle_tranche', tranche_id: 2, settlement: 'returned', settled_quantity: 400 });
      expect(s.body.status).to.equal('settled');
      expect(s.body.tranches.map((t) => t.settled_quantity)).to.deep.equal([600, 400]);
      const b = (await post('owner', terms())).body.id;
      await act('owner', b, { action: 'activate' });
      expect((await act('owner', b, { action: 'recall' })).body.status).to.equal('recalled');
      expect((await act('owner', b, { action: 'activate' })).body).to.deep.equal({ message: ACTION_MESSAGES.notInState('activate', 'recalled') });
    });
  });

  describe('KPI and loan_twap scaling', () => {
    it('counts the evaluations of the market maker\'s targets on the loan\'s pairs since the start', async () => {
      const r = await call<{ id: number }[]>('POST', '/v2/organizations/targets/batch/', {
        token: tokens.owner,
        json: { create_targets: [{ organization: w.mm, asset: w.asset, exchange: w.ex, pair: spot, metric: 'depth/bid_2bps', threshold: 1 }] },
      });
      expect(r.status, r.text).to.equal(201);
      const id = r.body[0]!.id;
      const ch = testStack().service.deps.ch;
      // Six evaluations since the start (4 met, 1 not, 1 without data) and two before it.
      const rows = [
        [start - 2 * MINUTE, true],
        [start - MINUTE, false],
        [start, true],
        [start + MINUTE, true],
        [start + 2 * MINUTE, false],
        [start + 3 * MINUTE, null],
        [start + 4 * MINUTE, true],
        [start + 5 * MINUTE, true],
      ] as const;
      await ch.insert('target_evaluations', rows.map(([m, met]) => ({ id, minute: m / 1000, value: 1, effective_threshold: 1, met, status: 'stable', evaluated_at: now })));
      const k = (await get('maker', loan)).body.kpi;
      expect(k).to.include({ targets: 1, evaluations: 5, met: 4 });
      expect(k.met_share).to.be.closeTo(4 / 5, 1e-12);
    });

    it('the keeper switches on an active awarded loan\'s KPI targets when the activation stopped before it, once', async () => {
      const { service } = testStack();
      const made = await call<{ id: number }[]>('POST', '/v2/organizations/targets/batch/', {
        token: tokens.owner,
        json: { create_targets: [{ organization: w.mm, asset: w.asset, exchange: w.ex, pair: spot, metric: 'volume/volume', threshold: 1, active: false }] },
      });
      expect(made.status, made.text).to.equal(201);
      const target = made.body[0]!.id;
      // As an activation that died after writing the loan: active, its award targets still off.
      const store = new AgreementStore(service.deps.ch);
      const id = (await post('owner', terms())).body.id;
      const draft = loanOf((await store.one<LoanRecord['body']>('loan', id))!);
      await store.write([loanRecord({ ...draft, status: 'active', version: draft.version + 1, award_targets: [target] }, { at: now, by: 0 })]);
      const changed = await keeper(now).runOnce();
      expect(changed.map((l) => l.id)).to.include(id);
      const isActive = async () => (await new TargetRepository(service.deps.ch).all()).find((t) => t.id === target)!.active;
      expect(await isActive()).to.equal(true);
      // Switched off by the project afterwards, it stays off.
      await call('POST', '/v2/organizations/targets/batch/', { token: tokens.owner, json: { delete_ids: [target], create_targets: [] } });
      expect((await keeper(now).runOnce()).map((l) => l.id)).to.not.include(id);
      await act('owner', id, { action: 'recall' });
    });

    it('a loan_twap target follows the start_twap of the active loan of its party and asset', () => {
      const t = { type: 'mm', organization: w.mm, asset: w.asset, threshold: 100, scaling_enabled: true, scaling_mode: 'price', scaling_source: 'loan_twap', scaling_reference_price: 2, current_price: null } as unknown as Target;
      expect(scaling(t, new Map(), new Map([[loanKey('mm', w.mm, w.asset), 3]]))).to.deep.equal({ effective_threshold: 150, current_price: 3, scaling_factor: 1.5 });
      expect(scaling(t, new Map(), new Map())).to.deep.equal({ effective_threshold: 100, current_price: null, scaling_factor: 1 });
    });
  });

  describe('the list', () => {
    it('filters by statuses, market makers and assets, and pages', async () => {
      const defaulted = await list('owner', { statuses: 'defaulted' });
      expect(defaulted.body.map((l) => l.id)).to.deep.equal([loan]);
      expect((await list('owner', { market_makers: 'nobody' })).body).to.deep.equal([]);
      const all = (await list('owner', { assets: w.asset })).body;
      expect(all.length).to.equal(6);
      const paged = await call<{ count: number; page: number; page_size: number; results: Shown[] }>('GET', `/v2/organizations/loans/?assets=${w.asset}&page=2&page_size=4`, { token: tokens.owner });
      expect(paged.body).to.include({ count: 6, page: 2, page_size: 4 });
      expect(paged.body.results.map((l) => l.id)).to.deep.equal([all[4]!.id, all[5]!.id]);
      expect((await list('owner', { statuses: 'lost' })).status).to.equal(400);
    });
  });

  describe('the clock', () => {
    it('a read shows a loan past its last expiry as settlement_due without writing it; the next action writes that move first', async () => {
      const expires = Date.now() + 1_500;
      const made = await post('owner', terms({ tranches: [{ quantity: 1000, strike_basis: 'fixed', strike_price: 1.5, expires_at: iso(expires) }] }));
      expect(made.status, made.text).to.equal(201);
      expect((await act('owner', made.body.id, { action: 'activate' })).body.status).to.equal('active');
      const shown = await waitFor('the expiry', async () => {
        const r = (await get('owner', made.body.id)).body;
        return r.status === 'settlement_due' && r;
      });
      expect(shown.history.at(-1)).to.deep.equal({ status: 'settlement_due', at: iso(expires), by: 0 });
      // No keeper runs in the test service: the read wrote nothing.
      const store = new AgreementStore(testStack().service.deps.ch);
      expect((await store.one('loan', made.body.id))?.status).to.equal('active');
      expect((await list('maker', { statuses: 'settlement_due' })).body.map((l) => l.id)).to.include(made.body.id);
      const d = await act('owner', made.body.id, { action: 'default' });
      expect(d.body.status, d.text).to.equal('defaulted');
      const versions = await store.versions('loan', made.body.id);
      expect(versions.map((v) => [v.version, v.status, v.changed_by === 0])).to.deep.equal([
        [1, 'draft', false],
        [2, 'active', false],
        [3, 'settlement_due', true],
        [4, 'defaulted', false],
      ]);
    });
  });

  describe("an action's answer", () => {
    it('is the loan as a read at that moment shows it: activated past its last expiry, settlement_due', async () => {
      const made = await post('owner', terms({ tranches: [{ quantity: 1000, strike_basis: 'fixed', strike_price: 1.5, expires_at: iso(start + DAY) }] }));
      expect(made.status, made.text).to.equal(201);
      const activated = await act('owner', made.body.id, { action: 'activate' });
      expect([activated.status, activated.body.status]).to.deep.equal([200, 'settlement_due']);
      expect(activated.body.status).to.equal((await get('owner', made.body.id)).body.status);
    });
  });

  describe('loans.events', () => {
    it('the relay publishes each change once, with the version in its id', async () => {
      const { service, kafka, config, log } = testStack();
      const producer = kafka.producer();
      await producer.connect();
      const header = (t: 'loans.events' | 'rfq.events') => frameHeader(service.schemaIds.get(t)!);
      const relay = new AgreementEventRelay(service.deps.ch, producer, { loans: { topic: topicName(config, 'loans.events'), header: header('loans.events') }, rfq: { topic: topicName(config, 'rfq.events'), header: header('rfq.events') } }, log, () => Date.now());
      const sent = await relay.runOnce();
      expect(sent).to.be.greaterThan(0);
      expect(await relay.runOnce()).to.equal(0);
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: `loans-events-${w.tag}` });
      const seen: { event_id: string; id: number; status: string }[] = [];
      await consumer.connect();
      await consumer.subscribe({ topic: topicName(config, 'loans.events'), fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }: { message: KafkaMessage }) => {
          seen.push(JSON.parse(message.value!.subarray(5).toString()) as { event_id: string; id: number; status: string });
        },
      });
      const versions = (await get('owner', loan)).body.history.length;
      const mine = await waitFor('the loan\'s events', async () => {
        const m = seen.filter((e) => e.id === loan);
        return m.length >= versions ? m : undefined;
      });
      await consumer.disconnect();
      expect(new Set(mine.map((e) => e.event_id)).size).to.equal(mine.length);
      expect(mine.map((e) => e.status)).to.include.members(['draft', 'active', 'settlement_due', 'defaulted']);
    });
  });
});
