// The target evaluator (addendum section 6) over books fed through Kafka: every status
// transition, the `updates` history, one targets.events message per change, the evaluation
// history endpoint, and restarts that neither skip nor repeat a minute. The evaluator runs
// here with a clock of the test's own; the pure parts (status machine, session windows,
// scaling) are in test/unit/targets.test.ts.
import { expect } from 'chai';
import { TargetEvaluator } from '../../processors/targets/evaluator.ts';
import { KafkaEventPublisher } from '../../processors/targets/evaluator.ts';
import { TargetRepository } from '../../domain/targets/repository.ts';
import { ReferenceRepository } from '../../domain/reference/repository.ts';
import { frameHeader } from '../../lib/schema-registry.ts';
import { topicName } from '../../lib/kafka.ts';
import type { TargetEventMessage } from '../../schemas/index.ts';
import { call, login, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';
import { RolledUp, RollupMarks } from '../../domain/market/repositories/rollup-marks.ts';

const MINUTE = 60_000;

describe('target evaluator', function () {
  this.timeout(120_000);
  const w = world();
  const spot = `${w.asset}/USDT`;
  // 400 minutes of books, ending hours ago: a tight spread (5 bps), but wide (50 bps) in
  // [70, 140) and one minute of 2,000 bps at 194.
  const base = Math.floor((Date.now() - 8 * 3_600_000) / MINUTE) * MINUTE;
  const at = (m: number) => base + m * MINUTE;
  const book = (m: number) => {
    const half = m === 194 ? 10 : m >= 70 && m < 140 ? 0.25 : 0.025;
    return { exchange: w.ex, pair: spot, ts: at(m) + 1_000, bids: [[100 - half, 10]], asks: [[100 + half, 10]] };
  };
  let token: string;
  let ids: { spread: number; never: number };
  let clock = Date.now();
  const events: TargetEventMessage[] = [];
  const evaluator = () => {
    const { service, kafka, config } = testStack();
    const ch = service.deps.ch;
    const producer = kafka.producer();
    const publisher = new KafkaEventPublisher(producer, topicName(config, 'targets.events'), frameHeader(service.schemaIds.get('targets.events')!));
    return {
      producer,
      e: new TargetEvaluator({
        ch,
        targets: new TargetRepository(ch),
        reference: new ReferenceRepository(ch),
        events: { publish: async (list) => {
          events.push(...list);
          await producer.connect();
          await publisher.publish(list);
        } },
        log: testStack().log,
        now: () => clock,
        latenessMs: 0,
        rolledUp: new RolledUp(new RollupMarks(ch), () => clock),
      }),
    };
  };
  const mine = () => new TargetRepository(testStack().service.deps.ch).all().then((all) => all.filter((t) => t.id === ids.spread || t.id === ids.never));

  before(async () => {
    await seed(w.fixture);
    token = await login(w.users.owner.email, w.password);
    const r = await call<{ id: number }[]>('POST', '/v2/organizations/targets/batch/', {
      token,
      json: {
        create_targets: [
          { organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, metric: 'spread/spread_bps', threshold: 10, telegram_notifications: true },
          { organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, metric: 'depth/bid_100bps', threshold: 1e12 },
        ],
      },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    ids = { spread: r.body[0]!.id, never: r.body[1]!.id };
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: topicName(config, 'md.orderbook'), messages: Array.from({ length: 400 }, (_, m) => ({ key: `${w.ex}:${spot}`, value: JSON.stringify(book(m)) })) });
    await producer.disconnect();
    await waitFor('400 minutes of books', async () => {
      const rows = await testStack().service.deps.ch.query<{ n: number }>(`SELECT count() AS n FROM book_minutes FINAL WHERE exchange = {ex:String}`, { ex: w.ex });
      return Number(rows[0]!.n) === 400;
    }, 60_000);
  });

  it('drives a target through every transition, keeping updates and one event per change', async () => {
    const { e, producer } = evaluator();
    // The evaluated minutes lie hours before the targets were made; the evaluator decides
    // each one a second after the last, from a minute after the creation on.
    const created = (await mine()).find((t) => t.id === ids.spread)!.created_at;
    const decidedAt = (m: number) => created + MINUTE + m * 1_000;
    const statusAt = async (m: number) => {
      clock = decidedAt(m);
      await e.evaluateMinute(at(m));
      return (await mine()).find((t) => t.id === ids.spread)!.status;
    };
    expect(await statusAt(60)).to.equal('stable'); // 60 tight minutes: mean 5 bps <= 10
    expect(await statusAt(100)).to.equal('alert'); // 30 tight + 30 wide: 27.5 bps
    expect(await statusAt(194)).to.equal('recovering'); // 6 wide + 54 tight: 9.5 bps, met once
    expect(await statusAt(195)).to.equal('alert'); // the 2,000 bps minute: 42 bps
    expect(await statusAt(255)).to.equal('recovering'); // the spike has left the hour
    expect(await statusAt(256)).to.equal('recovering');
    expect(await statusAt(257)).to.equal('stable'); // third met in a row
    await producer.disconnect();
    const t = (await mine()).find((x) => x.id === ids.spread)!;
    expect(t.updates.map((u) => u.status)).to.deep.equal(['unchecked', 'stable', 'alert', 'recovering', 'alert', 'recovering', 'stable']);
    // Each change dated when it was decided, not by the minute evaluated (hours before creation).
    expect(t.updates[0]!.updated_at).to.equal(created);
    expect(t.updates.slice(1).map((u) => u.updated_at)).to.deep.equal([60, 100, 194, 195, 255, 257].map(decidedAt));
    // Never met: unchecked -> alert once, then no more changes.
    expect((await mine()).find((x) => x.id === ids.never)!.updates.map((u) => u.status)).to.deep.equal(['unchecked', 'alert']);
    const mineEvents = events.filter((x) => x.target_id === ids.spread);
    expect(mineEvents.map((x) => `${x.previous_status}>${x.status}`)).to.deep.equal(['unchecked>stable', 'stable>alert', 'alert>recovering', 'recovering>alert', 'alert>recovering', 'recovering>stable']);
    expect(mineEvents[1]).to.include({ organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, metric: 'spread/spread_bps', effective_threshold: 10, direction: 'below', telegram_notifications: true, event_id: `${ids.spread}:${at(100)}` });
    expect(mineEvents[1]!.value).to.be.closeTo(27.5, 1e-6);
  });

  it('shows each evaluation with its value, threshold, met and status to whoever sees the target', async () => {
    const q = new URLSearchParams({ time_start: new Date(at(0)).toISOString(), time_end: new Date(at(400)).toISOString() });
    const r = await call<{ timestamp: string; value: number; effective_threshold: number; met: boolean; status: string }[]>('GET', `/v2/organizations/targets/${ids.spread}/evaluations/?${q}`, { token });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.map((x) => x.timestamp)).to.deep.equal([60, 100, 194, 195, 255, 256, 257].map((m) => new Date(at(m)).toISOString().replace('.000Z', 'Z')));
    expect(r.body[1]).to.include({ met: false, status: 'alert', effective_threshold: 10 });
    expect(r.body[1]!.value).to.be.closeTo(27.5, 1e-6);
    const maker = await login(w.users.maker.email, w.password);
    const hidden = await call('GET', `/v2/organizations/targets/${ids.spread}/evaluations/`, { token: maker });
    const unknown = await call('GET', `/v2/organizations/targets/987654321/evaluations/`, { token: maker });
    expect(hidden.status).to.equal(404);
    expect(hidden.body).to.deep.equal(unknown.body);
  });

  it('catches up the minutes it missed in order, and a restart evaluates none twice', async () => {
    // The progress now stands at the last minute applied above; put the clock 3 minutes past it.
    const { e, producer } = evaluator();
    clock = at(257) + 4 * MINUTE;
    const before = (await mine()).find((t) => t.id === ids.spread)!.updates.length;
    const done = await e.catchUp();
    expect(done.map((x) => x.minute)).to.deep.equal([at(258), at(259), at(260)]);
    const restarted = evaluator();
    expect(await restarted.e.catchUp()).to.deep.equal([]);
    expect((await mine()).find((t) => t.id === ids.spread)!.updates.length).to.equal(before);
    await producer.disconnect();
    await restarted.producer.disconnect();
  });

  it("dates a new target's first change at its creation at the earliest, when the evaluated hour and the clock lie before it", async () => {
    const r = await call<{ id: number }[]>('POST', '/v2/organizations/targets/batch/', {
      token,
      json: { create_targets: [{ organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, metric: 'spread/mid_price', threshold: 1e6 }] },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const id = r.body[0]!.id;
    const created = (await new TargetRepository(testStack().service.deps.ch).all()).find((t) => t.id === id)!.created_at;
    // The evaluator's clock a minute behind the API's that made the target; the hour
    // evaluated ends hours before it (a mid of 100, at most 10^6: unchecked -> stable).
    const { e, producer } = evaluator();
    clock = created - MINUTE;
    await e.evaluateMinute(at(300));
    await producer.disconnect();
    const list = await call<{ id: number; status: string; updates: { status: string; updated_at: string }[] }[]>('GET', '/v2/organizations/targets/', { token });
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    const shown = list.body.find((t) => t.id === id)!;
    expect(shown.status).to.equal('stable');
    expect(shown.updates.map((u) => u.status)).to.deep.equal(['unchecked', 'stable']);
    const dates = shown.updates.map((u) => Date.parse(u.updated_at));
    expect(dates).to.deep.equal([created, created]);
  });
});
