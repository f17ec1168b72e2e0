// Exactly-once effect: a service whose processors are killed with SIGKILL at random points
// (before a write, between a write and its progress, between that and the offset commit,
// and at random moments) and restarted, then made to replay its topics, must answer every
// query exactly like a service that ran once, uninterrupted, over the same messages. The
// topics are the market's and a market maker's own orders and fills (trusted metrics).
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { topicName } from '../../lib/kafka.ts';
import { call, waitFor, world } from '../support/helpers.ts';
import { generate } from '../support/market-reference.ts';
import { testStack } from '../support/stack.ts';
import { opsToken, startChild, stopChild, type Child } from '../support/child-service.ts';
import { seededRandom } from '../support/seed.ts';

/**
 * The first place two answers differ, for a readable failure. Numbers compare to 1e-12
 * relative: the runs write their minutes in different parts, so ClickHouse adds the same
 * floats in another order and the last binary digit of a sum may differ; a minute lost or
 * counted twice moves a value by far more.
 */
function firstDifference(a: unknown, b: unknown, at = ''): string | undefined {
  if (a === b) return undefined;
  if (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b))) return undefined;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return `${at}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}/${k}`);
    if (d) return d;
  }
  return undefined;
}


describe('exactly-once effect under SIGKILL and replays', function () {
  const random = seededRandom('exactly-once kills');
  this.timeout(600_000);
  const w = world();
  const runId = `eo${Date.now().toString(36)}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-eo-'));
  const spot = `${w.asset}/USDT`;
  const perp = `${w.asset}_PERP/USDT`;
  const from = Date.UTC(2026, 2, 2, 9, 0);
  const to = Date.UTC(2026, 2, 2, 9, 40);
  const data = generate(from, to, 7_000, 3);
  const perpData = generate(from, to, 13_000, 5);
  // A pair quoted in another currency, converted with the mids of <other>/USDT by event time:
  // a restart must convert the messages it reads again as the first run did.
  const otherQuoted = `${w.asset}/${w.other}`;
  w.fixture.pairs!.push({ exchange: w.ex, pair: otherQuoted, asset: w.asset, market_type: 'spot' });
  const otherQuotedData = generate(from, to, 9_000, 11);
  const quoteData = generate(from, to + 60_000, 6_000, 13);
  const children: Child[] = [];
  const stage = { reference: undefined as Child | undefined, chaos: undefined as Child | undefined };
  const wallet = w.fixture.wallets![0]!.id;
  // The market maker's own book: the top three levels of every other public snapshot, a
  // tenth of their size; its fills: every other trade, a fifth of its size, each sent twice.
  const ownOrders = data.snaps
    .filter((_, i) => i % 2 === 0)
    .map((s) => ({
      organization: w.mm,
      wallet_id: wallet,
      exchange: w.ex,
      pair: spot,
      ts: s.ts,
      bids: s.bids.slice(0, 3).map(([p, q]) => [p, q / 10]),
      asks: s.asks.slice(0, 3).map(([p, q]) => [p, q / 10]),
    }));
  const fills = data.trades
    .filter((_, i) => i % 2 === 0)
    .map((t, i) => ({ organization: w.mm, wallet_id: wallet, exchange: w.ex, pair: spot, ts: t.ts, price: t.price, amount: t.amount / 5, side: 'sell', id: `f${i}` }));
  const fillVolume = fills.reduce((v, f) => v + f.price * f.amount, 0);
  const ownBuckets = new Set(ownOrders.map((o) => Math.floor(o.ts / 300_000))).size;

  async function produce(prefix: string) {
    const producer = testStack().kafka.producer();
    await producer.connect();
    const k = (x: { exchange: string; pair: string }) => `${x.exchange}:${x.pair}`;
    const books = [
      ...data.snaps.map((s) => ({ exchange: w.ex, pair: spot, ts: s.ts, bids: s.bids, asks: s.asks })),
      ...perpData.snaps.map((s) => ({ exchange: w.ex, pair: perp, ts: s.ts, bids: s.bids, asks: s.asks })),
      ...otherQuotedData.snaps.map((s) => ({ exchange: w.ex, pair: otherQuoted, ts: s.ts, bids: s.bids, asks: s.asks })),
      // Its quote currency's mids, worth about a hundredth of a dollar, and sent after it.
      ...quoteData.snaps.map((s) => ({ exchange: w.ex, pair: `${w.other}/USDT`, ts: s.ts, bids: s.bids.map(([p, q]) => [p / 1e4, q]), asks: s.asks.map(([p, q]) => [p / 1e4, q]) })),
    ];
    const trades = [
      ...data.trades.map((t, i) => ({ exchange: w.ex, pair: spot, ts: t.ts, price: t.price, amount: t.amount, side: 'buy', id: i })),
      ...otherQuotedData.trades.map((t, i) => ({ exchange: w.ex, pair: otherQuoted, ts: t.ts, price: t.price, amount: t.amount, side: 'buy', id: i })),
    ];
    const derivs = [10, 20, 30].map((m, i) => ({ exchange: w.ex, pair: perp, ts: from + m * 60_000, funding_rate_8h: 0.0001 * (i + 1), usd_open_interest: 1e6 * (i + 1) }));
    // In several sends, so the processors see several batches and flushes.
    for (let i = 0; i < books.length; i += 100) {
      await producer.send({ topic: topicName({ topicPrefix: prefix }, 'md.orderbook'), messages: books.slice(i, i + 100).map((m) => ({ key: k(m), value: JSON.stringify(m) })) });
    }
    await producer.send({ topic: topicName({ topicPrefix: prefix }, 'md.trades'), messages: trades.map((m) => ({ key: k(m), value: JSON.stringify(m) })) });
    await producer.send({ topic: topicName({ topicPrefix: prefix }, 'md.derivatives'), messages: derivs.map((m) => ({ key: k(m), value: JSON.stringify(m) })) });
    for (let i = 0; i < ownOrders.length; i += 100) {
      await producer.send({ topic: topicName({ topicPrefix: prefix }, 'mm.orders'), messages: ownOrders.slice(i, i + 100).map((m) => ({ key: k(m), value: JSON.stringify(m) })) });
    }
    await producer.send({ topic: topicName({ topicPrefix: prefix }, 'mm.fills'), messages: [...fills, ...fills].map((m) => ({ key: k(m), value: JSON.stringify(m) })) });
    await producer.disconnect();
  }

  /** Everything the endpoints answer for the pairs, per minute and for the window. */
  // One sign-in per service: the answers are asked for in loops, and sign-in is throttled.
  const tokens = new Map<string, string>();
  async function answers(c: Child) {
    let token = tokens.get(c.url);
    if (!token) {
      const staff = await call('POST', '/v1/login/', { baseUrl: c.url, json: { email: w.users.staff.email, password: w.password } });
      expect(staff.status, staff.text).to.equal(200);
      token = staff.body.token as string;
      tokens.set(c.url, token);
    }
    const q = `assets=${w.asset},${w.asset}_PERP&time_start=${new Date(from).toISOString()}&time_end=${new Date(to + 3600_000).toISOString()}`;
    const out: Record<string, unknown> = {};
    for (const [name, path] of [
      ['spot minutes', `/v1/admin/orderbook/minutes/?exchange=${w.ex}&pair=${encodeURIComponent(spot)}&time_start=${new Date(from).toISOString()}&time_end=${new Date(to + 3600_000).toISOString()}`],
      ['summary', `/v2/metrics/summary/?${q}`],
      ['leaderboard', `/v2/leaderboard/?${q}`],
      ['spread 1m', `/v2/metrics/uptime/spread/?${q}&interval=1m`],
      ['depth 5m', `/v2/metrics/uptime/depth/?${q}&interval=5m`],
      ['regional 1m', `/v2/metrics/volume/regional/?${q}&interval=1m`],
      ['market-maker summary 1h', `/v2/organizations/market-maker-metrics/summary/?${q}&interval=1h`],
      ['market-maker summary a', `/v2/organizations/market-maker-metrics/summary/?${q}&interval=a`],
      ['trusted depth 5m', `/v2/organizations/trusted-metrics/depth/?${q}&interval=5m`],
    ] as const) {
      const r = await call('GET', path, { baseUrl: c.url, token });
      expect(r.status, `${name}: ${r.text}`).to.equal(200);
      out[name] = r.body;
    }
    return out;
  }

  /** Done when every snapshot, trade and fill is in closed minutes, and trusted depth in every 5-minute bucket of own orders. */
  async function complete(c: Child): Promise<boolean> {
    const a = (await answers(c)) as {
      summary: { pair: string; tick_bps_samples: number; volume: number }[];
      'market-maker summary a': { pair: string; volume: number }[];
      'trusted depth 5m': unknown[];
    };
    const s = a.summary.find((x) => x.pair === spot);
    const p = a.summary.find((x) => x.pair === perp);
    const x = a.summary.find((r) => r.pair === otherQuoted);
    const volume = data.trades.reduce((v, t) => v + t.price * t.amount, 0);
    const mm = a['market-maker summary a'].find((x) => x.pair === spot);
    return (
      s?.tick_bps_samples === data.snaps.length &&
      p?.tick_bps_samples === perpData.snaps.length &&
      x?.tick_bps_samples === otherQuotedData.snaps.length &&
      x.volume !== null &&
      Math.abs((s?.volume ?? 0) - volume) < volume * 1e-9 &&
      Math.abs((mm?.volume ?? 0) - fillVolume) < fillVolume * 1e-9 &&
      a['trusted depth 5m'].length === ownBuckets
    );
  }

  /** The two runs' answers, once they agree (the last minutes' trusted depth may land a moment after completion); fails with the first difference. */
  async function sameAnswers(a: Child, b: Child, what: string): Promise<void> {
    let difference: string | undefined;
    await waitFor(what, async () => {
      difference = firstDifference(await answers(a), await answers(b));
      return difference === undefined;
    }, 20_000).catch(() => expect.fail(`${what}: ${difference}`));
  }

  after(async () => {
    for (const c of children) await stopChild(c).catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a run killed at every kind of point ends with the same answers as one never interrupted', async () => {
    const refDir = path.join(tmp, 'reference');
    const chaosDir = path.join(tmp, 'chaos');
    const ref = await startChild(refDir, `${runId}r.`);
    children.push(ref);
    stage.reference = ref;
    let chaos = await startChild(chaosDir, `${runId}c.`);
    children.push(chaos);
    for (const c of [ref, chaos]) {
      const r = await call('POST', '/v1/admin/fixtures/', { baseUrl: c.url, authorization: `Ops-Token ${opsToken(c)}`, json: w.fixture });
      expect(r.status, r.text).to.equal(200);
    }
    await stopChild(chaos);
    await produce(`${runId}r.`);
    await produce(`${runId}c.`);

    // Crash points in order, then kills at random moments.
    const plan = ['before-write:1', 'after-write:1', 'before-commit:1', 'after-write:2', 'before-write:3', 'before-commit:3', 'random', 'random'];
    let kills = 0;
    for (const fault of plan) {
      chaos = await startChild(chaosDir, `${runId}c.`, fault === 'random' ? '' : fault);
      children.push(chaos);
      if (fault === 'random') setTimeout(() => chaos.proc.kill('SIGKILL'), 300 + Math.floor(random() * 2500));
      const outcome = await Promise.race([chaos.exited, new Promise<'alive'>((r) => setTimeout(() => r('alive'), 6_000))]);
      if (outcome !== 'alive') {
        expect(outcome.signal, chaos.log.join('')).to.equal('SIGKILL');
        kills++;
      } else {
        await stopChild(chaos);
      }
    }
    expect(kills, 'crash points reached').to.be.at.least(4);

    chaos = await startChild(chaosDir, `${runId}c.`);
    children.push(chaos);
    stage.chaos = chaos;
    await waitFor('the reference run complete', () => complete(ref), 120_000);
    await waitFor('the interrupted run complete', () => complete(chaos), 120_000);
    await sameAnswers(chaos, ref, 'interrupted vs uninterrupted');
  });

  it('replaying the topics from the start or from a time changes no answer', async () => {
    let chaos = stage.chaos!;
    const before = await answers(chaos);
    await stopChild(chaos);
    const env = { ...process.env, DATA_DIR: chaos.dataDir, TOPIC_PREFIX: `${runId}c.`, KAFKA_BROKERS: testStack().config.kafkaBrokers.join(',') };
    const replay = (args: string[]) =>
      new Promise<void>((resolve, reject) => {
        const p = spawn(process.execPath, ['--import', 'tsx', 'ops/cli/replay-topic.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        p.stdout.on('data', (b: Buffer) => (out += b));
        p.stderr.on('data', (b: Buffer) => (out += b));
        p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ops:replay ${args.join(' ')} failed:\n${out}`))));
      });
    await replay(['--topic', 'md.orderbook', '--earliest']);
    await replay(['--topic', 'md.trades', '--time', new Date(Date.now() - 3600_000).toISOString()]);
    await replay(['--topic', 'md.derivatives', '--offset', '1']);
    await replay(['--topic', 'mm.orders', '--earliest']);
    await replay(['--topic', 'mm.fills', '--earliest']);
    chaos = await startChild(chaos.dataDir, `${runId}c.`);
    children.push(chaos);
    // Let it read everything again: the status counts every re-read as skipped.
    const staff = await call('POST', '/v1/login/', { baseUrl: chaos.url, json: { email: w.users.staff.email, password: w.password } });
    await waitFor('the replay read', async () => {
      const s = await call('GET', '/v1/admin/status/', { baseUrl: chaos.url, token: staff.body.token });
      const book = s.body.processors[topicName({ topicPrefix: `${runId}c.` }, 'md.orderbook')];
      return book && book.ok + book.skipped + book.deadLettered >= data.snaps.length + perpData.snaps.length + otherQuotedData.snaps.length + quoteData.snaps.length;
    });
    await waitFor('the replay of the market maker read', async () => {
      const s = await call('GET', '/v1/admin/status/', { baseUrl: chaos.url, token: staff.body.token });
      const seen = (t: 'mm.orders' | 'mm.fills') => {
        const x = s.body.processors[topicName({ topicPrefix: `${runId}c.` }, t)];
        return x ? x.ok + x.skipped + x.deadLettered : 0;
      };
      return seen('mm.orders') >= ownOrders.length && seen('mm.fills') >= 2 * fills.length;
    });
    await new Promise((r) => setTimeout(r, 1500));
    const difference = firstDifference(await answers(chaos), before);
    if (difference) expect.fail(`after the replays vs before: ${difference}`);
  });
});
