// The event stream (docs/stream.md) against the real stack, read by an outside client:
// books and target changes produced with a plain Kafka client, loans and RFQs changed over
// HTTP; each role's stream shows what it may see and never what it may not; resume after a
// disconnect and after a restart; the ticket; a slow client; access ended on open streams.
import { expect } from 'chai';
import type { Producer } from 'kafkajs';
import { AgreementEventRelay } from '../../processors/agreements/event-relay.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { StreamHub, type StreamOptions } from '../../api/stream/hub.ts';
import { frameHeader } from '../../lib/schema-registry.ts';
import { sendInParts, topicName } from '../../lib/kafka.ts';
import { LEVELS_BPS } from '../../domain/market/facts.ts';
import { call, login, seed, waitFor, world } from '../support/helpers.ts';
import { minutesOf, type Snap } from '../support/market-reference.ts';
import { SseClient } from '../support/sse.ts';
import { testStack } from '../support/stack.ts';
import { EventSource } from 'eventsource';

const MINUTE = 60_000;
const DAY = 86_400_000;

describe('GET /v2/stream/ (server-sent events)', function () {
  this.timeout(180_000);
  const w = world();
  const other = world();
  const tokens: Record<string, string> = {};
  let producer: Producer;
  let hub: StreamHub;
  let api: RunningApi;
  const now = Date.now();
  const spot = `${w.asset}/USDT`;
  const usd = `${w.asset}/USD`;

  /** A stream process of its own on the service's data, with limits a test can reach. */
  async function startInstance(options: Partial<StreamOptions> = {}) {
    const { service, kafka, config, log } = testStack();
    const deps = service.deps;
    const h = new StreamHub({ kafka, config, log: log.child('stream'), now: Date.now, ch: deps.ch, referenceLists: deps.referenceLists }, { heartbeatMs: 100, recheckMs: 500, ...options });
    await h.start();
    const a = await startApi({ ...deps, stream: h }, '127.0.0.1', 0);
    return { hub: h, api: a };
  }
  const stop = async (i: { hub: StreamHub; api: RunningApi }) => {
    await i.hub.stop();
    await i.api.close();
  };

  const open = (who: string, query = '', headers: Record<string, string> = {}, base = api.url) =>
    SseClient.connect(`${base}/v2/stream/${query ? `?${query}` : ''}`, { Authorization: `Token ${tokens[who]}`, ...headers });

  /** Waits for two heartbeats on each: anything sent before this call has then been read. */
  const settled = (...cs: SseClient[]) =>
    Promise.all(
      cs.map((c) => {
        const n = c.comments;
        return c.until('two heartbeats', (x) => x.comments >= n + 2);
      }),
    );

  const book = (mid: number, ts: number): Snap => ({ ts, bids: [[mid - 0.01, 100], [mid - 0.05, 400], [mid * 0.995, 1000]], asks: [[mid + 0.01, 100], [mid + 0.05, 300], [mid * 1.006, 900]] });

  /** Books for three closed minutes of a pair, and one now that closes them. */
  async function produceBooks(exchange: string, pair: string, base: number): Promise<Snap[]> {
    const snaps: Snap[] = [];
    const first = Math.floor(now / MINUTE) * MINUTE - 6 * MINUTE;
    for (let m = 0; m < 3; m++) for (let s = 0; s < 3; s++) snaps.push(book(base + m + s / 10, first + m * MINUTE + s * 15_000));
    const closer = book(base, Date.now());
    await producer.send({
      topic: topicName(testStack().config, 'md.orderbook'),
      messages: [...snaps, closer].map((x) => ({ key: `${exchange}:${pair}`, value: JSON.stringify({ exchange, pair, ts: x.ts, bids: x.bids, asks: x.asks }) })),
    });
    return snaps;
  }

  // Ids from a counter: the hub keeps one event per id, and 30,000 random 32-bit ids collide
  // about one run in ten.
  let events = 0;
  const targetEvent = (over: Record<string, unknown>) => ({
    event_id: `ev-${w.tag}-${++events}`,
    target_id: 1,
    type: 'gb',
    organization: w.project,
    asset: w.asset,
    exchange: w.ex,
    pair: spot,
    metric: 'spread/spread_bps',
    market_hours: null,
    previous_status: 'stable',
    status: 'alert',
    value: 42,
    effective_threshold: 20,
    direction: 'below',
    minute: new Date(now).toISOString(),
    telegram_notifications: false,
    ...over,
  });
  const produceTargets = (events: Record<string, unknown>[]) =>
    producer.send({ topic: topicName(testStack().config, 'targets.events'), messages: events.map((e) => ({ key: String(e.target_id), value: JSON.stringify(e) })) });

  /** The agreement relay of the service, run once (the test stack runs no relay of its own). */
  async function relay(): Promise<void> {
    const { service, config, log } = testStack();
    const p = testStack().kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await p.connect();
    try {
      const r = new AgreementEventRelay(
        service.deps.ch,
        p,
        {
          loans: { topic: topicName(config, 'loans.events'), header: frameHeader(service.schemaIds.get('loans.events')!) },
          rfq: { topic: topicName(config, 'rfq.events'), header: frameHeader(service.schemaIds.get('rfq.events')!) },
        },
        log,
        Date.now,
      );
      await r.runOnce();
    } finally {
      await p.disconnect();
    }
  }

  before(async () => {
    await seed(w.fixture);
    await seed(other.fixture);
    for (const [who, u] of Object.entries(w.users)) tokens[who] = await login(u.email, w.password);
    tokens.stranger = await login(other.users.owner.email, other.password);
    producer = testStack().kafka.producer();
    await producer.connect();
    ({ hub, api } = await startInstance());
  });

  after(async () => {
    await producer?.disconnect();
    if (hub) await stop({ hub, api });
  });

  describe('filters are checked as the market endpoints check theirs', () => {
    it('names an asset, an exchange or a pair the caller may not use; refuses an unknown event type and an id that is not ours', async () => {
      const r = await call('GET', `/v2/stream/?assets=${w.asset},${other.asset}&exchanges=${w.ex},nope-${w.tag}&pairs=${usd}`, { token: tokens.maker, baseUrl: api.url });
      expect(r.status).to.equal(400);
      // The maker covers the asset on one exchange only: the other exchange's pair is not its.
      expect(r.body).to.deep.equal({ assets: [`"${other.asset}" is not one of your assets.`], exchanges: [`"nope-${w.tag}" is not a known exchange.`], pairs: [`"${usd}" is not one of your pairs.`] });
      const types = await call('GET', '/v2/stream/?events=minute,trades', { token: tokens.owner, baseUrl: api.url });
      expect(types.status).to.equal(400);
      expect(types.body).to.have.keys(['events']);
      const id = await call('GET', '/v2/stream/?last_event_id=12', { token: tokens.owner, baseUrl: api.url });
      expect(id.status).to.equal(400);
      expect(id.body).to.deep.equal({ last_event_id: ['Not an event id of this stream.'] });
      expect((await call('GET', '/v2/stream/', { baseUrl: api.url })).status).to.equal(401);
    });
  });

  describe('each event type reaches those who may see it, and no one else', () => {
    it('minute: a pair\'s written minute, with its depth at the levels asked, on the streams of those who see the pair', async () => {
      const owner = await open('owner');
      const maker = await open('maker', 'bps=0.5,10,500');
      const staff = await open('staff', `assets=${w.asset}`);
      const stranger = await open('stranger');
      const loner = await open('loner');
      const owner10 = await open('owner', `pairs=${usd}&events=minute`);
      try {
        const snaps = await produceBooks(w.ex, spot, 100);
        await produceBooks(w.ex2, usd, 200);
        const first = Math.floor(now / MINUTE) * MINUTE - 6 * MINUTE;
        const trades = [
          { ts: first + 1_000, price: 100, amount: 2 },
          { ts: first + 2_000, price: 101, amount: 3 },
          { ts: first + MINUTE + 5_000, price: 102, amount: 1 },
          { ts: Date.now(), price: 100, amount: 1 },
        ];
        await producer.send({
          topic: topicName(testStack().config, 'md.trades'),
          messages: trades.map((t, i) => ({ key: `${w.ex}:${spot}`, value: JSON.stringify({ exchange: w.ex, pair: spot, ts: t.ts, price: t.price, amount: t.amount, side: 'buy', id: `t${i}` }) })),
        });
        const expected = minutesOf(snaps);
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const ofPair = (p: string) => (d: any) => d.pair === p && d.source === 'book';
        await owner.until('three minutes of each pair', (c) => c.of('minute', ofPair(spot)).length >= 3 && c.of('minute', ofPair(usd)).length >= 3);
        const got = owner.of('minute', ofPair(spot));
        expect(got.map((d) => Date.parse(d.timestamp))).to.deep.equal([...expected.keys()]);
        for (const d of got) {
          const ref = expected.get(Date.parse(d.timestamp))!;
          expect(d).to.include({ exchange: w.ex, pair: spot, asset: w.asset, source: 'book' });
          expect(d.mid).to.be.closeTo(ref.mids.reduce((s, x) => s + x, 0) / ref.mids.length, 1e-9);
          const i10 = LEVELS_BPS.indexOf(10);
          expect(d.bid_10bps).to.be.closeTo(ref.bid.reduce((s, x) => s + x[i10]!, 0) / ref.bid.length, 1e-6);
          expect(d).to.have.keys(['exchange', 'pair', 'asset', 'timestamp', 'source', 'mid', 'spread_bps', 'bid_10bps', 'ask_10bps', 'bid_50bps', 'ask_50bps', 'bid_100bps', 'ask_100bps', 'written_at']);
        }
        await owner.until('the trades of two minutes', (c) => c.of('minute', (d) => d.source === 'trades').length >= 2);
        expect(owner.of('minute', (d) => d.source === 'trades').slice(0, 2).map((d) => [d.timestamp, d.volume, d.trades])).to.deep.equal([
          [new Date(first).toISOString(), 100 * 2 + 101 * 3, 2],
          [new Date(first + MINUTE).toISOString(), 102, 1],
        ]);
        // Each event's id is the place to resume from.
        expect(owner.events.every((e) => e.id && /^1:/.test(e.id))).to.equal(true);
        await maker.until('the covered pair', (c) => c.of('minute', ofPair(spot)).length >= 3);
        expect(maker.of('minute', (d) => d.source === 'book')[0]).to.include.keys(['bid_0.5bps', 'ask_0.5bps', 'bid_500bps', 'ask_500bps']);
        await staff.until('both pairs', (c) => c.of('minute', ofPair(usd)).length >= 3 && c.of('minute', ofPair(spot)).length >= 3);
        await owner10.until('the pair asked', (c) => c.of('minute', ofPair(usd)).length >= 3);
        await settled(maker, stranger, loner, owner10);
        // The maker's coverage lists one exchange: the other exchange's pair is not its.
        expect(maker.of('minute', (d) => d.pair === usd)).to.deep.equal([]);
        expect(owner10.of('minute', (d) => d.pair !== usd)).to.deep.equal([]);
        expect(stranger.of('minute', (d) => d.asset === w.asset)).to.deep.equal([]);
        expect(loner.events).to.deep.equal([]);
      } finally {
        for (const c of [owner, maker, staff, stranger, loner, owner10]) c.close();
      }
    });

    it('target: a status change, to the members who see the target as the targets list decides', async () => {
      const owner = await open('owner', 'events=target');
      const maker = await open('maker', 'events=target');
      const stranger = await open('stranger', 'events=target');
      const staff = await open('staff', `events=target&exchanges=${w.ex2}`);
      try {
        const gb = targetEvent({ target_id: 11, type: 'gb', organization: w.project });
        const mm = targetEvent({ target_id: 12, type: 'mm', organization: w.mm, metric: 'depth/bid_10bps', direction: 'above' });
        const elsewhere = targetEvent({ target_id: 13, type: 'gb', organization: w.project, exchange: w.ex2, pair: usd });
        await produceTargets([gb, mm, elsewhere]);
        await owner.until('three changes', (c) => c.of('target').length >= 3);
        expect(owner.of('target').map((d) => d.id)).to.deep.equal([11, 12, 13]);
        expect(owner.of('target')[0]).to.deep.equal({
          id: 11, type: 'gb', organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, metric: 'spread/spread_bps', market_hours: null,
          previous_status: 'stable', status: 'alert', value: 42, effective_threshold: 20, direction: 'below', minute: new Date(now).toISOString(),
        });
        await maker.until('its own mm target', (c) => c.of('target').length >= 1);
        await staff.until('the target on the exchange asked', (c) => c.of('target').length >= 1);
        await settled(maker, stranger, staff);
        // A market maker sees its own mm targets, never a project's gb ones.
        expect(maker.of('target').map((d) => d.id)).to.deep.equal([12]);
        expect(stranger.of('target')).to.deep.equal([]);
        expect(staff.of('target').map((d) => d.id)).to.deep.equal([13]);
      } finally {
        for (const c of [owner, maker, stranger, staff]) c.close();
      }
    });

    it('loan and rfq: a changed record, with what changed, to the parties who see it', async () => {
      const owner = await open('owner', 'events=loan,rfq');
      const maker = await open('maker', 'events=loan,rfq');
      const stranger = await open('stranger', 'events=loan,rfq');
      try {
        const iso = (ms: number) => new Date(ms).toISOString();
        const loan = await call('POST', '/v2/organizations/loans/', {
          token: tokens.owner,
          json: {
            market_maker: w.mm, asset: w.asset, model: 'retainer', quantity: 1000, retainer_fee_usd_month: 5000, settlement_asset: 'USDT',
            exchanges: [w.ex], pairs: [spot], start_date: iso(now + DAY), end_date: iso(now + 60 * DAY),
            tranches: [{ quantity: 1000, strike_basis: 'fixed', strike_price: 1.5, expires_at: iso(now + 30 * DAY) }],
          },
        });
        expect(loan.status, loan.text).to.equal(201);
        expect((await call('PATCH', `/v2/organizations/loans/${loan.body.id}/`, { token: tokens.owner, json: { quantity: 1000, retainer_fee_usd_month: 6000 } })).status).to.equal(200);
        const rfq = await call('POST', '/v2/organizations/rfqs/', {
          token: tokens.owner,
          json: { asset: w.asset, title: 'Stream test', description: '', models: ['retainer'], exchanges: [w.ex], loan_budget: { quantity: 1000, quote_amount: 0 }, term_days: 30, requirements: [], invited: [], deadline: iso(now + 2 * DAY) },
        });
        expect(rfq.status, rfq.text).to.equal(201);
        await relay();
        await owner.until('the loan twice and the draft RFQ', (c) => c.of('loan').length >= 2 && c.of('rfq').length >= 1);
        expect(owner.of('loan')).to.deep.equal([
          { id: loan.body.id, version: 1, status: 'draft', previous_status: null, change: 'created', changed: [], organization: w.project, market_maker: w.mm, asset: w.asset, at: owner.of('loan')[0].at },
          { id: loan.body.id, version: 2, status: 'draft', previous_status: 'draft', change: 'updated', changed: ['retainer_fee_usd_month'], organization: w.project, market_maker: w.mm, asset: w.asset, at: owner.of('loan')[1].at },
        ]);
        expect(owner.of('rfq')[0]).to.include({ kind: 'rfq', id: rfq.body.id, status: 'draft', change: 'created' });
        await maker.until('the loan made to it', (c) => c.of('loan').length >= 2);
        // A draft RFQ is its project's alone; once open, the invited market makers see it.
        expect((await call('POST', `/v2/organizations/rfqs/${rfq.body.id}/actions/`, { token: tokens.owner, json: { action: 'open' } })).status).to.equal(200);
        await relay();
        await maker.until('the opened RFQ', (c) => c.of('rfq').length >= 1);
        expect(maker.of('rfq').map((d) => [d.id, d.status, d.changed])).to.deep.equal([[rfq.body.id, 'open', ['status']]]);
        await owner.until('the opened RFQ', (c) => c.of('rfq').length >= 2);
        await settled(stranger);
        expect(stranger.events).to.deep.equal([]);
      } finally {
        for (const c of [owner, maker, stranger]) c.close();
      }
    });

    it('loan: a market maker filters by the asset of a loan made to it that it does not cover; no one else may', async () => {
      const filter = `events=loan&assets=${w.other}`;
      // The maker covers w.asset only: before a loan on w.other, that asset is not its.
      const before = await call('GET', `/v2/stream/?${filter}`, { token: tokens.maker, baseUrl: api.url });
      expect(before.status).to.equal(400);
      expect(before.body).to.deep.equal({ assets: [`"${w.other}" is not one of your assets.`] });
      const iso = (ms: number) => new Date(ms).toISOString();
      const loan = await call('POST', '/v2/organizations/loans/', {
        token: tokens.owner,
        json: {
          market_maker: w.mm, asset: w.other, model: 'retainer', quantity: 500, retainer_fee_usd_month: 1000, settlement_asset: 'USDT',
          exchanges: [w.ex], pairs: [`${w.other}/USDT`], start_date: iso(now + DAY), end_date: iso(now + 60 * DAY),
          tranches: [{ quantity: 500, strike_basis: 'fixed', strike_price: 2, expires_at: iso(now + 30 * DAY) }],
        },
      });
      expect(loan.status, loan.text).to.equal(201);
      const maker = await open('maker', filter);
      try {
        await relay();
        await maker.until('the loan on the asset it does not cover', (c) => c.of('loan').some((d) => d.id === loan.body.id));
        expect(maker.of('loan').map((d) => d.asset)).to.deep.equal(maker.of('loan').map(() => w.other));
        const stranger = await call('GET', `/v2/stream/?${filter}`, { token: tokens.stranger, baseUrl: api.url });
        expect(stranger.status).to.equal(400);
        expect(stranger.body).to.deep.equal({ assets: [`"${w.other}" is not one of your assets.`] });
      } finally {
        maker.close();
      }
    });

    it('loan: a draft given to another market maker is withdrawn from the first, without naming the second', async () => {
      const iso = (ms: number) => new Date(ms).toISOString();
      const terms = {
        market_maker: w.mm, asset: w.asset, model: 'retainer', quantity: 700, retainer_fee_usd_month: 1000, settlement_asset: 'USDT',
        exchanges: [w.ex], pairs: [spot], start_date: iso(now + DAY), end_date: iso(now + 60 * DAY),
        tranches: [{ quantity: 700, strike_basis: 'fixed', strike_price: 2, expires_at: iso(now + 30 * DAY) }],
      };
      const owner = await open('owner', 'events=loan');
      const maker = await open('maker', 'events=loan');
      try {
        const loan = await call('POST', '/v2/organizations/loans/', { token: tokens.owner, json: terms });
        expect(loan.status, loan.text).to.equal(201);
        const moved = await call('PATCH', `/v2/organizations/loans/${loan.body.id}/`, { token: tokens.owner, json: { ...terms, market_maker: other.mm } });
        expect(moved.status, moved.text).to.equal(200);
        await relay();
        const of = (c: SseClient) => c.of('loan', (d) => d.id === loan.body.id);
        await owner.until('the loan made and moved', (c) => of(c).length >= 2);
        await maker.until('the loan made and withdrawn', (c) => of(c).length >= 2);
        expect(of(owner).map((d) => [d.version, d.change, d.market_maker])).to.deep.equal([[1, 'created', w.mm], [2, 'updated', other.mm]]);
        expect(of(maker).map((d) => [d.version, d.change, d.market_maker, d.changed])).to.deep.equal([[1, 'created', w.mm, []], [2, 'withdrawn', null, ['market_maker']]]);
        expect(JSON.stringify(of(maker))).not.to.contain(other.mm);
        // Read as the loans resource reads it: no longer the maker's.
        expect((await call('GET', `/v2/organizations/loans/${loan.body.id}/`, { token: tokens.maker, baseUrl: api.url })).status).to.equal(404);
      } finally {
        owner.close();
        maker.close();
      }
    });
  });
  describe('resume', () => {
    const ids = (c: SseClient) => c.events.filter((e) => e.type === 'target').map((e) => [JSON.parse(e.data).id as number, e.id]);

    it('after a disconnect: what was missed, in order, without duplicates; after a restart of the stream process, the same', async () => {
      // On the service's own stream process, which stays up.
      const reference = await open('owner', 'events=target', {}, testStack().url);
      const first = await open('owner', 'events=target');
      try {
        await produceTargets([21, 22, 23].map((id) => targetEvent({ target_id: id })));
        await first.until('three changes', (c) => c.of('target').length >= 3);
        first.close();
        const after23 = first.lastId!;
        expect(first.events.at(-1)!.id).to.equal(after23);
        await produceTargets([24, 25, 26].map((id) => targetEvent({ target_id: id })));
        await reference.until('six changes', (c) => c.of('target').length >= 6);

        const again = await open('owner', 'events=target', { 'Last-Event-ID': after23 });
        await again.until('the three missed', (c) => c.of('target').length >= 3);
        await settled(again);
        expect(ids(again)).to.deep.equal(ids(reference).slice(3));
        again.close();

        // The stream process restarts: its ring is rebuilt from Kafka, the ids still hold.
        const after26 = again.lastId!;
        await stop({ hub, api });
        await produceTargets([27, 28].map((id) => targetEvent({ target_id: id })));
        ({ hub, api } = await startInstance());
        await reference.until('eight changes', (c) => c.of('target').length >= 8);
        const restarted = await open('owner', 'events=target', { 'Last-Event-ID': after26 });
        const fromStart = await open('owner', 'events=target', {}, `${api.url}`);
        const viaQuery = await SseClient.connect(`${api.url}/v2/stream/?events=target&last_event_id=${encodeURIComponent(after23)}`, { Authorization: `Token ${tokens.owner}` });
        try {
          await restarted.until('the two missed', (c) => c.of('target').length >= 2);
          await viaQuery.until('the five missed', (c) => c.of('target').length >= 5);
          await settled(restarted, viaQuery, fromStart);
          expect(ids(restarted)).to.deep.equal(ids(reference).slice(6));
          expect(ids(viaQuery)).to.deep.equal(ids(reference).slice(3));
          // A new stream starts now: nothing of before, but an id to resume from at once.
          expect(fromStart.events).to.deep.equal([]);
          expect(fromStart.lastId).to.match(/^1:/);
          expect(fromStart.retry).to.be.a('number');
        } finally {
          for (const c of [restarted, fromStart, viaQuery]) c.close();
        }
      } finally {
        reference.close();
        first.close();
      }
    });

    it('an id older than what the process keeps, of another layout, or ahead of the topics: reset, then the stream goes on from now', async () => {
      const probe = await open('owner', 'events=target');
      let oldId: string;
      try {
        await produceTargets([31].map((id) => targetEvent({ target_id: id })));
        await probe.until('one change', (c) => c.of('target').length >= 1);
        oldId = probe.lastId!;
      } finally {
        probe.close();
      }
      await produceTargets([32, 33, 34].map((id) => targetEvent({ target_id: id })));
      // A process that keeps two events: the changes after the id are gone from it.
      const small = await startInstance({ maxEvents: 2 });
      try {
        await waitFor('the small ring to catch up', async () => small.hub.stats().caughtUp);
        const c = await open('owner', 'events=target', { 'Last-Event-ID': oldId }, small.api.url);
        const layout = await open('owner', 'events=target', { 'Last-Event-ID': '1:9:0.0.0.0.0.0.0.0.0' }, small.api.url);
        // The stream's own layout, each partition far past its end.
        const forged = oldId.replace(/:[^:]+$/, (offsets) => offsets.replace(/[0-9a-z]+/g, 'zzzz'));
        const ahead = await open('owner', 'events=target', { 'Last-Event-ID': forged }, small.api.url);
        try {
          for (const x of [c, layout, ahead]) await x.until('reset', (y) => y.events.length >= 1);
          expect(c.events[0]!.type).to.equal('reset');
          expect(JSON.parse(c.events[0]!.data)).to.have.keys(['reason']);
          expect(layout.events[0]!.type).to.equal('reset');
          expect(ahead.events[0]!.type).to.equal('reset');
          expect(JSON.parse(ahead.events[0]!.data).reason).to.match(/ahead/);
          await produceTargets([35].map((id) => targetEvent({ target_id: id })));
          for (const x of [c, ahead]) await x.until('the next change', (y) => y.of('target').length >= 1);
          expect(c.of('target').map((d) => d.id)).to.deep.equal([35]);
          expect(ahead.of('target').map((d) => d.id)).to.deep.equal([35]);
        } finally {
          c.close();
          layout.close();
          ahead.close();
        }
      } finally {
        await stop(small);
      }
    });
  });

  describe('the ticket, for an EventSource', () => {
    it('opens one stream, once, as the caller who asked for it', async () => {
      const base = testStack().url;
      const t = await call('POST', '/v2/stream/tickets/', { token: tokens.maker });
      expect(t.status).to.equal(201);
      expect(t.body).to.have.keys(['ticket', 'expires_at', 'url']);
      const es = new EventSource(`${base}${t.body.url}?events=target`);
      const received: { id: number }[] = [];
      let lastEventId = '';
      try {
        await new Promise<void>((resolve, reject) => {
          es.addEventListener('open', () => resolve());
          es.addEventListener('error', (e) => reject(new Error(`EventSource: ${e.message ?? 'error'}`)));
        });
        es.addEventListener('target', (e) => {
          received.push(JSON.parse(e.data) as { id: number });
          lastEventId = e.lastEventId;
        });
        await produceTargets([targetEvent({ target_id: 41, type: 'gb' }), targetEvent({ target_id: 42, type: 'mm', organization: w.mm })]);
        await waitFor('the maker\'s change', async () => received.length >= 1);
        expect(received.map((d) => d.id)).to.deep.equal([42]);
        expect(lastEventId).to.match(/^1:/);
      } finally {
        es.close();
      }
      const twice = await SseClient.open(`${base}${t.body.url}`);
      expect(twice).to.deep.equal({ status: 401, body: JSON.stringify({ detail: 'Invalid token.' }) });
      const made = await SseClient.open(`${base}/v2/stream/tickets/${'A'.repeat(43)}/`);
      expect((made as { status: number }).status).to.equal(401);
      expect((await call('POST', '/v2/stream/tickets/', {})).status).to.equal(401);
    });
  });

  describe('a slow client', () => {
    it('falls behind, gets reset and is closed; the others get everything meanwhile', async () => {
      const small = await startInstance({ maxLagEvents: 5_000 });
      const slow = await open('owner', 'events=target', {}, small.api.url);
      const fast = await open('owner', 'events=target', {}, small.api.url);
      try {
        slow.pause();
        // Enough to fill the socket's buffers on both sides several times over.
        const many = Array.from({ length: 30_000 }, (_, i) => targetEvent({ target_id: 100_000 + i, metric: `depth/bid_10bps ${'x'.repeat(180)}` }));
        await sendInParts(producer, topicName(testStack().config, 'targets.events'), many.map((e) => ({ key: String(e.target_id), value: JSON.stringify(e) })));
        await waitFor('the slow one dropped', async () => small.hub.stats().subscribers === 1, 120_000);
        // It reads again at once: what was sent before its end, then the end (the service
        // gives a client that reads nothing a few seconds to take it).
        slow.resume();
        await slow.until('its end', (c) => c.ended);
        await fast.until('every change', (c) => c.events.length >= many.length, 120_000);
        expect(fast.of('target').at(-1).id).to.equal(many.at(-1)!.target_id);
        expect(slow.events.at(-1)!.type).to.equal('reset');
        expect(slow.of('target').length).to.be.lessThan(many.length);
        expect(fast.ended).to.equal(false);
      } finally {
        slow.close();
        fast.close();
        await stop(small);
      }
    });
  });

  describe('access ended on an open stream', () => {
    it('ends the stream when its API key is revoked, its token signed out, or its membership ended', async () => {
      const key = await call('POST', '/v1/user/api-keys/', { token: tokens.owner, json: { name: 'stream', password: w.password, scopes: ['metrics:read'] } });
      expect(key.status).to.equal(201);
      const writeOnly = await call('POST', '/v1/user/api-keys/', { token: tokens.owner, json: { name: 'push', password: w.password, scopes: ['reported_metrics:write'] } });
      expect((await SseClient.open(`${api.url}/v2/stream/`, { Authorization: `Api-Key ${writeOnly.body.key}` }) as { status: number }).status).to.equal(403);
      const byKey = await SseClient.connect(`${api.url}/v2/stream/`, { Authorization: `Api-Key ${key.body.key}` });
      const session = await login(w.users.owner.email, w.password);
      const byToken = await SseClient.connect(`${api.url}/v2/stream/`, { Authorization: `Token ${session}` });
      const member = { email: `member-${w.tag}@test.example`, username: `member-${w.tag}`, password: w.password, organizations: [w.project] };
      await seed({ users: [member] });
      const byMember = await SseClient.connect(`${api.url}/v2/stream/`, { Authorization: `Token ${await login(member.email, w.password)}` });
      const bystander = await open('owner');
      try {
        // A whole round of checks begun after they opened lets each of them go on.
        const round = hub.stats().rechecks;
        await waitFor('a round of checks', async () => hub.stats().rechecks > round + 1);
        expect([byKey, byToken, byMember, bystander].map((c) => c.ended)).to.deep.equal([false, false, false, false]);
        expect((await call('DELETE', `/v1/user/api-keys/${key.body.id}/`, { token: tokens.owner })).status).to.equal(204);
        expect((await call('POST', '/v1/logout/', { token: session })).status).to.be.oneOf([200, 204]);
        await seed({ users: [{ ...member, organizations: [] }] });
        await Promise.all([
          byKey.until('the end of the key\'s stream', (c) => c.ended),
          byToken.until('the end of the signed-out stream', (c) => c.ended),
          byMember.until('the end of the former member\'s stream', (c) => c.ended),
        ]);
        await settled(bystander);
        expect(bystander.ended).to.equal(false);
      } finally {
        for (const c of [byKey, byToken, byMember, bystander]) c.close();
      }
    });
  });
});
