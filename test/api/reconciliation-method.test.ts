// The reconciliation against reports made by the documented method
// (domain/market-makers/reporting.ts, docs/market-makers.md): the demo's market makers
// (ingest/synthetic/market-makers.ts) quote a moving public book through the real pipeline
// and push their reports as the demo does, once a minute, the last buckets covered only in
// part. The honest one (two accounts) is flagged at no level and no interval the endpoint accepts, with
// no difference at all; the one that reports three times its depth is flagged on every row.
import { expect } from 'chai';
import { INTERVALS } from '../../domain/market/facts.ts';
import { SyntheticMarketMakers } from '../../ingest/synthetic/market-makers.ts';
import { topicName } from '../../lib/kafka.ts';
import type { OrderBookMessage, ReportedMessage, TradeMessage } from '../../schemas/index.ts';
import { call, login, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
type Row = Record<string, unknown> & { organization: { slug: string }; flag: boolean; flagged: string[] };

describe('reconciliation of reports made by the documented method', function () {
  this.timeout(180_000);
  const w = world();
  const liar = `mm3-${w.tag}`;
  const spot = `${w.asset}/USDT`;
  const honestWallet = w.fixture.wallets![0]!.id;
  const liarWallet = honestWallet + 30_000_000;
  w.fixture.organizations!.push({ slug: liar, name: `Maker three ${w.tag}`, kind: 'market_maker' });
  w.fixture.coverage!.push({ organization: liar, assets: [w.asset], exchanges: [w.ex], pairs: [spot] });
  w.fixture.wallets!.push({ id: liarWallet, organization: liar, number: 1, exchange: w.ex });
  // The honest maker quotes from two accounts on the exchange: its report is of both together.
  const honest = w.fixture.wallets![0]!;
  w.fixture.wallets!.push({ id: honestWallet + 60_000_000, organization: honest.organization, number: 2, exchange: honest.exchange });
  const fixture = w.fixture;

  // 70 minutes from 20 minutes before a whole hour, three snapshots a minute whose mids move
  // within the minute; in the last 3 minutes the book is wide (nothing within 200 bps).
  const start = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR - 20 * MINUTE;
  const N = 70;
  const end = start + N * MINUTE;
  const book = (k: number, s: number): OrderBookMessage => {
    const mid = 100 + 0.04 * Math.sin(k * 0.7 + s * 1.3) + 0.02 * ((k * 7 + s) % 5);
    const gap = k >= N - 3 ? 0.025 : 0.0001 * (1 + ((k + s) % 4));
    const px = (x: number) => Number(x.toFixed(4));
    const levels = (sign: number) => Array.from({ length: 10 }, (_, j): [number, number] => [px(mid * (1 + sign * (gap + 0.0002 * j))), 5 + ((k * 7 + j * 3 + s) % 11)]);
    return { exchange: w.ex, pair: spot, ts: start + k * MINUTE + 5_000 + s * 20_000, bids: levels(-1), asks: levels(1) };
  };

  let staff: string;
  let lastPush = 0;

  before(async () => {
    await seed(fixture);
    staff = await login(w.users.staff.email, w.password);
    const { kafka, config, service } = testStack();
    const makers = new SyntheticMarketMakers(fixture, { [liar]: 3 }, config.latenessMs);
    // The demo's pushes, once a minute: each covers the minutes ended the lateness and a
    // minute before it, the last one all but the last 3 minutes.
    const pushes = Array.from({ length: N - 3 }, (_, k) => start + (k + 1) * MINUTE + config.latenessMs + MINUTE + 5_000);
    const sends: Record<'md.orderbook' | 'md.trades' | 'mm.orders' | 'mm.fills', object[]> = { 'md.orderbook': [], 'md.trades': [], 'mm.orders': [], 'mm.fills': [] };
    const reports: { at: number; items: ReportedMessage[] }[] = [];
    const events = [
      ...Array.from({ length: N * 3 }, (_, i) => ({ at: book(Math.floor(i / 3), i % 3).ts as number, snapshot: [Math.floor(i / 3), i % 3] as const })),
      ...pushes.map((at) => ({ at, snapshot: undefined })),
    ].sort((a, b) => a.at - b.at);
    for (const e of events) {
      if (!e.snapshot) {
        reports.push({ at: e.at, items: makers.reports(e.at) });
        continue;
      }
      const [k, s] = e.snapshot;
      const b = book(k, s);
      const trades: TradeMessage[] = s === 1 ? [{ exchange: w.ex, pair: spot, ts: b.ts, price: b.bids[0]![0], amount: 1 + (k % 3), side: k % 2 ? 'buy' : 'sell', id: `t${k}` }] : [];
      const own = makers.tick([b], trades, e.at);
      sends['md.orderbook'].push(b);
      sends['md.trades'].push(...trades);
      sends['mm.orders'].push(...own.orders);
      sends['mm.fills'].push(...own.fills);
    }
    const producer = kafka.producer();
    await producer.connect();
    for (const topic of ['md.orderbook', 'md.trades', 'mm.orders', 'mm.fills'] as const) {
      await producer.send({ topic: topicName(config, topic), messages: sends[topic].map((v) => ({ key: `${w.ex}:${spot}`, value: JSON.stringify(v) })) });
    }
    await producer.disconnect();
    // A push of now first, into an hour without data: the reported processor reads the new
    // organizations before the pushes of hours ago come (it believes a miss of a push older
    // than its last read of the reference data).
    const now = Date.now();
    const hour = Math.floor(now / HOUR) * HOUR;
    const nothing = (organization: string): ReportedMessage => ({ organization, asset: w.asset, exchange: w.ex, pair: spot, metric: 'volume/volume', interval: '1h', timestamp: hour, value: 0 });
    await service.deps.reportedMetrics.publish([nothing(w.mm), nothing(liar)], now);
    await waitFor('the organizations read by the reported processor', async () => {
      const [n] = await service.deps.ch.query<{ n: number }>('SELECT count() AS n FROM mm_reported WHERE organization IN {o:Array(String)}', { o: [w.mm, liar] });
      return Number(n!.n) === 2;
    });
    // Reported as the demo reports: through the push's publisher, at the push's time.
    for (const r of reports) if (r.items.length > 0) await service.deps.reportedMetrics.publish(r.items, r.at);
    lastPush = reports[reports.length - 1]!.at;
    expect(reports[reports.length - 1]!.items.length).to.be.above(0);

    const ch = service.deps.ch;
    await waitFor(
      'the trusted minutes and the last push',
      async () => {
        const [d] = await ch.query<{ n: number }>('SELECT count() AS n FROM trusted_depth_minutes FINAL WHERE wallet_id IN {w:Array(UInt64)}', { w: [honestWallet, liarWallet] });
        const [p] = await ch.query<{ at: number }>(
          'SELECT toUnixTimestamp64Milli(max(pushed_at)) AS at FROM mm_reported WHERE organization IN {o:Array(String)} AND pushed_at < {now:DateTime64(3)}',
          { o: [w.mm, liar], now: now / 1000 },
        );
        return Number(d!.n) === 2 * N && Number(p!.at) === lastPush;
      },
      120_000,
    );
  });

  const windows = {
    'from the day of the first minute to now': { time_start: iso(Math.floor(start / DAY) * DAY), time_end: iso(Date.now() + HOUR) },
    'from inside a 5-minute bucket of the data': { time_start: iso(start + 37 * MINUTE + 20_000), time_end: iso(end + 10 * MINUTE) },
  };

  for (const [name, window] of Object.entries(windows)) {
    it(`flags the honest maker at no level and no interval, and the threefold one on every row: ${name}`, async () => {
      for (const interval of INTERVALS) {
        const r = await call<Row[]>('GET', `/v2/organizations/market-maker-metrics/reconciliation/?${new URLSearchParams({ ...window, interval })}`, { token: staff });
        expect(r.status, `${interval}: ${r.text}`).to.equal(200);
        const honest = r.body.filter((x) => x.organization.slug === w.mm);
        const over = r.body.filter((x) => x.organization.slug === liar);
        // Every interval has rows in both windows: a reported bucket that began before the window but reaches into it counts.
        expect(honest, `rows of the honest maker at ${interval}`).to.not.be.empty;
        expect(over, `rows of the threefold maker at ${interval}`).to.not.be.empty;
        expect(honest.length, interval).to.equal(over.length);
        for (const row of honest) {
          expect(row.flagged, `${interval} ${String(row.timestamp)}`).to.deep.equal([]);
          expect(row.flag).to.equal(false);
          // Not only under the tolerance: equal, but for rounding.
          for (const [k, v] of Object.entries(row)) if (k.endsWith('_diff_pct') && v !== null) expect(Math.abs(v as number), `${interval} ${k}`).to.be.below(1e-6);
        }
        for (const row of over) {
          expect(row.flag, `${interval} ${String(row.timestamp)}`).to.equal(true);
          // Depth three times over; volume as it was.
          expect(row.bid_500bps_diff_pct as number, interval).to.be.closeTo(200, 1e-6);
          expect(row.flagged).to.not.include('volume');
        }
      }
    });
  }

  it('flags an honest report at no tolerance either, and the threefold one up to a tolerance of 200 %', async () => {
    const window = windows['from the day of the first minute to now'];
    for (const interval of ['5m', '1h', '1d', 'a']) {
      const strict = await call<Row[]>('GET', `/v2/organizations/market-maker-metrics/reconciliation/?${new URLSearchParams({ ...window, interval, tolerance_pct: '0' })}`, { token: staff });
      expect(strict.body.filter((x) => x.organization.slug === w.mm).every((x) => !x.flag), interval).to.equal(true);
      const lenient = await call<Row[]>('GET', `/v2/organizations/market-maker-metrics/reconciliation/?${new URLSearchParams({ ...window, interval, tolerance_pct: '199' })}`, { token: staff });
      expect(lenient.body.filter((x) => x.organization.slug === liar).every((x) => x.flag), interval).to.equal(true);
    }
  });
});
