// The five market endpoints against values computed independently from the addendum's
// definitions (test/support/market-reference.ts), on books, trades and perpetual data sent
// through Kafka and read back over HTTP, at windows that use minute, hour and day rows.
import { expect } from 'chai';
import { DateTime } from 'luxon';
import { topicName } from '../../lib/kafka.ts';
import { call, login, seed, waitFor, world } from '../support/helpers.ts';
import { L, generate, minutesOf, tradesOf, windowOf } from '../support/market-reference.ts';
import { testStack } from '../support/stack.ts';
import { PartialsRepository } from '../../domain/market/repositories/partials.ts';
import { WriteCounts } from '../../domain/market/repositories/write-counts.ts';
import { planBuckets } from '../../domain/market/window.ts';
import { OPEN_STEP_MS } from '../../domain/market/repositories/rollup-marks.ts';
import { PartialsCache, WindowPartials } from '../../api/market-caches/window-partials.ts';
import { maxCachedRows } from '../../api/market-caches/uptime-rows.ts';

const D0 = Date.UTC(2026, 0, 4, 22, 0);
const D1 = Date.UTC(2026, 0, 7, 2, 0);
const close = (actual: unknown, expected: number | null, what: string) => {
  if (expected === null) return expect(actual, what).to.equal(null);
  expect(actual, what).to.be.a('number');
  expect(actual as number, what).to.be.closeTo(expected, Math.abs(expected) * 1e-9 + 1e-9);
};

/** Equal, numbers to the last bits: cached partials are summed in another order than ClickHouse sums them. */
const same = (a: unknown, b: unknown, where: string): void => {
  if (typeof a === 'number' && typeof b === 'number') expect(a, where).to.be.closeTo(b, Math.abs(b) * 1e-12);
  else if (a && typeof a === 'object') {
    expect(Object.keys(a), where).to.deep.equal(Object.keys(b as object));
    for (const k of Object.keys(b as object)) same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${where}.${k}`);
  } else expect(a, where).to.equal(b);
};

describe('market endpoints (/v2/metrics/*, /v2/leaderboard/)', function () {
  this.timeout(180_000);
  const w = world();
  const spot = `${w.asset}/USDT`;
  const perp = `${w.asset}_PERP/USDT`;
  const data = generate(D0, D1, 40_000);
  const perpData = generate(D0, D1, 90_000, 11);
  const minutes = minutesOf(data.snaps);
  let token: string;

  before(async () => {
    await seed(w.fixture);
    token = await login(w.users.owner.email, w.password);
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    const send = async (topic: 'md.orderbook' | 'md.trades' | 'md.derivatives', messages: object[]) => {
      for (let i = 0; i < messages.length; i += 1000) {
        await producer.send({
          topic: topicName(config, topic),
          messages: messages.slice(i, i + 1000).map((m) => ({ key: `${(m as { exchange: string }).exchange}:${(m as { pair: string }).pair}`, value: JSON.stringify(m) })),
        });
      }
    };
    await send('md.orderbook', [
      ...data.snaps.map((s) => ({ exchange: w.ex, pair: spot, ts: new Date(s.ts).toISOString(), bids: s.bids, asks: s.asks })),
      ...perpData.snaps.map((s) => ({ exchange: w.ex, pair: perp, ts: s.ts, bids: s.bids, asks: s.asks })),
    ]);
    await send('md.trades', data.trades.map((t, i) => ({ exchange: w.ex, pair: spot, ts: t.ts, price: t.price, amount: t.amount, side: i % 2 ? 'buy' : 'sell', id: `t${i}` })));
    await send('md.derivatives', [
      { exchange: w.ex, pair: perp, ts: D0 + 3600_000, funding_rate_8h: 0.0001, usd_open_interest: 1_000_000 },
      { exchange: w.ex, pair: perp, ts: D0 + 7200_000, funding_rate_8h: 0.0003, usd_open_interest: 2_500_000 },
      { exchange: w.ex, pair: perp, ts: D1 - 60_000, funding_rate_8h: -0.0002, usd_open_interest: 3_000_000 },
    ]);
    await producer.disconnect();
    const all = windowOf(minutes, D0, D1)!;
    await waitFor(
      'every snapshot in the rollups',
      async () => {
        const r = await call('GET', `/v2/metrics/summary/?assets=${w.asset},${w.asset}_PERP&time_start=${new Date(D0).toISOString()}&time_end=${new Date(D1).toISOString()}&bps=1`, { token });
        const row = Array.isArray(r.body) ? r.body.find((x: { pair: string }) => x.pair === spot) : undefined;
        const perpRow = Array.isArray(r.body) ? r.body.find((x: { pair: string }) => x.pair === perp) : undefined;
        return row?.tick_bps_samples === all.samples && perpRow?.funding_rate_8h === -0.0002 && row.volume > 0;
      },
      90_000,
    );
  });

  describe('summary', () => {
    // Starts and ends mid-hour and spans whole days: read from minute, hour and day rows.
    const from = Date.UTC(2026, 0, 4, 22, 30);
    const to = Date.UTC(2026, 0, 7, 1, 30);

    it('matches the definitions at every level, over a window tiled by days, hours and minutes', async () => {
      const r = await call('POST', '/v2/metrics/summary/', { token, json: { assets: [w.asset, `${w.asset}_PERP`], time_start: new Date(from).toISOString(), time_end: new Date(to).toISOString() } });
      expect(r.status).to.equal(200);
      const row = r.body.find((x: { pair: string }) => x.pair === spot);
      const ref = windowOf(minutes, from, to)!;
      const trades = tradesOf(data.trades, from, to);
      expect(row.asset).to.equal(w.asset);
      expect(row.exchange).to.deep.equal({ slug: w.ex, name: `Exchange ${w.tag}`, icon_url: 'https://example.org/x.png' });
      close(row.twap, ref.twap, 'twap');
      close(row.volume, trades.volume, 'volume');
      close(row.vwap, trades.vwap, 'vwap');
      close(row.tick_bps, (ref.tick / ref.twap) * 1e4, 'tick_bps');
      expect(row.tick_bps_samples).to.equal(ref.samples);
      expect(row.tick_bps_status).to.equal('ok');
      expect(row.funding_rate_8h).to.equal(null);
      L.forEach((l, i) => {
        close(row[`bid_${l}bps`], ref.bid[i]!, `bid_${l}bps`);
        close(row[`ask_${l}bps`], ref.ask[i]!, `ask_${l}bps`);
        close(row[`n_bid_${l}bps`], ref.nbid[i]!, `n_bid_${l}bps`);
        close(row[`n_ask_${l}bps`], ref.nask[i]!, `n_ask_${l}bps`);
      });
      const keys = Object.keys(row);
      expect(keys.slice(0, 11)).to.deep.equal(['asset', 'exchange', 'pair', 'volume', 'twap', 'vwap', 'funding_rate_8h', 'usd_open_interest', 'tick_bps', 'tick_bps_status', 'tick_bps_samples']);
      expect(keys).to.include('bid_0.05bps').and.include('n_ask_500bps');
      const perpRow = r.body.find((x: { pair: string }) => x.pair === perp);
      // the latest values inside the window (the last ones came after it ended)
      expect(perpRow.funding_rate_8h).to.equal(0.0003);
      expect(perpRow.usd_open_interest).to.equal(2_500_000);
    });

    it('returns only the requested levels, with names without trailing zeros; GET equals POST', async () => {
      const q = `assets=${w.asset}&bps=0.5,25,0.05&time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`;
      const get = await call('GET', `/v2/metrics/summary/?${q}`, { token });
      const post = await call('POST', '/v2/metrics/summary/', { token, json: { assets: w.asset, bps: [0.5, 25, 0.05], time_start: new Date(from).toISOString(), time_end: new Date(to).toISOString() } });
      expect(get.body).to.deep.equal(post.body);
      const cols = Object.keys(get.body[0]).filter((k) => /bps$/.test(k) && k !== 'tick_bps');
      expect(cols).to.deep.equal(['bid_0.05bps', 'bid_0.5bps', 'bid_25bps', 'n_bid_0.05bps', 'n_bid_0.5bps', 'n_bid_25bps', 'ask_0.05bps', 'ask_0.5bps', 'ask_25bps', 'n_ask_0.05bps', 'n_ask_0.5bps', 'n_ask_25bps']);
    });

    it('offers the same columns as CSV under the given file name', async () => {
      const q = `assets=${w.asset}&bps=1&time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`;
      const json = await call('GET', `/v2/metrics/summary/?${q}`, { token });
      const csv = await call('GET', `/v2/metrics/summary/?${q}&type=csv&filename=acme.csv`, { token });
      expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
      expect(csv.headers.get('content-disposition')).to.equal('attachment; filename="acme.csv"');
      const lines = csv.text.trim().split('\n');
      expect(lines[0]).to.equal(Object.keys(json.body[0]).join(','));
      expect(lines).to.have.length(json.body.length + 1);
      expect(lines[1]!.split(',')[1]).to.equal(w.ex);
    });
  });

  describe('spread and depth uptime', () => {
    it('1h buckets in UTC match the definitions hour by hour', async () => {
      const from = Date.UTC(2026, 0, 5, 0);
      const to = Date.UTC(2026, 0, 5, 6);
      const r = await call('GET', `/v2/metrics/uptime/spread/?assets=${w.asset}&interval=1h&time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`, { token });
      expect(r.status).to.equal(200);
      const rows = r.body.filter((x: { pair: string }) => x.pair === spot);
      expect(rows).to.have.length(6);
      rows.forEach((row: Record<string, number | string>, h: number) => {
        const ref = windowOf(minutes, from + h * 3600_000, from + (h + 1) * 3600_000)!;
        expect(row.timestamp).to.equal(new Date(from + h * 3600_000).toISOString().replace('.000Z', 'Z'));
        close(row.mid_price, ref.twap, 'mid_price');
        L.forEach((l, i) => close(row[`${l}bps`], ref.spreadUp[i]!, `${l}bps @${h}`));
      });
    });

    it('1d buckets in UTC (day rows, hour rows at the edges) and 1m buckets match the definitions', async () => {
      for (const [interval, from, to, len] of [
        ['1d', D0, D1, 86_400_000],
        ['1m', Date.UTC(2026, 0, 5, 11, 50), Date.UTC(2026, 0, 5, 12, 10), 60_000],
      ] as const) {
        const r = await call('GET', `/v2/metrics/uptime/spread/?assets=${w.asset}&interval=${interval}&bps=0,1,500&time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`, { token });
        expect(r.status).to.equal(200);
        const rows = r.body.filter((x: { pair: string }) => x.pair === spot);
        const starts = rows.map((x: { timestamp: string }) => Date.parse(x.timestamp));
        expect(starts[0], interval).to.equal(Math.floor(from / len) * len);
        expect(rows, interval).to.have.length(Math.ceil(to / len) - Math.floor(from / len));
        rows.forEach((row: Record<string, number | string>, k: number) => {
          const ref = windowOf(minutes, Math.max(from, starts[k]), Math.min(to, starts[k] + len))!;
          close(row.mid_price, ref.twap, `${interval} mid_price @${row.timestamp}`);
          for (const l of [0, 1, 500]) close(row[`${l}bps`], ref.spreadUp[L.indexOf(l)]!, `${interval} ${l}bps @${row.timestamp}`);
        });
      }
    });

    it('1d buckets follow market_hours_timezone, also at a half-hour offset', async () => {
      for (const zone of ['America/New_York', 'Asia/Kolkata']) {
        const day = DateTime.fromISO('2026-01-05T00:00', { zone });
        const from = day.toMillis();
        const to = day.plus({ days: 1 }).toMillis();
        const r = await call('GET', `/v2/metrics/uptime/depth/?assets=${w.asset}&interval=1d&market_hours_timezone=${zone}&time_start=${encodeURIComponent(day.toISO()!)}&time_end=${day.plus({ days: 1 }).toISO()}&bps=5,100,500&amounts=25000,100000`, { token });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        const rows = r.body.filter((x: { pair: string }) => x.pair === spot);
        expect(rows).to.have.length(1);
        expect(rows[0].timestamp).to.equal(day.toISO({ suppressMilliseconds: true }));
        const ref = windowOf(minutes, from, to)!;
        for (const a of [25000, 100000]) for (const l of [5, 100, 500]) close(rows[0][`${a}_at_${l}bps`], ref.depthUp(a)[L.indexOf(l)]!, `${zone} ${a}_at_${l}bps`);
        expect(Object.keys(rows[0])).to.deep.equal(['asset', 'exchange', 'pair', 'timestamp', '25000_at_5bps', '25000_at_100bps', '25000_at_500bps', '100000_at_5bps', '100000_at_100bps', '100000_at_500bps']);
      }
    });

    it('depth uptime at amounts outside the standard five is computed from minutes', async () => {
      const from = Date.UTC(2026, 0, 5, 10, 17);
      const to = Date.UTC(2026, 0, 5, 14, 3);
      const r = await call('POST', '/v2/metrics/uptime/depth/', { token, json: { assets: [w.asset], time_start: new Date(from).toISOString(), time_end: new Date(to).toISOString(), amounts: '12345.5,300000', bps: '50' } });
      expect(r.status).to.equal(200);
      const row = r.body.find((x: { pair: string }) => x.pair === spot);
      const ref = windowOf(minutes, from, to)!;
      close(row['12345.5_at_50bps'], ref.depthUp(12345.5)[L.indexOf(50)]!, '12345.5_at_50bps');
      close(row['300000_at_50bps'], ref.depthUp(300000)[L.indexOf(50)]!, '300000_at_50bps');
      expect(row).to.not.have.property('timestamp');
    });

    it('interval c covers the window with calendar buckets carrying their interval', async () => {
      const from = Date.UTC(2026, 0, 4, 22, 50);
      const to = Date.UTC(2026, 0, 7, 1, 10);
      const r = await call('GET', `/v2/metrics/uptime/spread/?assets=${w.asset}&interval=c&bps=10&time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`, { token });
      const rows = r.body.filter((x: { pair: string }) => x.pair === spot);
      const intervals = rows.map((x: { interval: string }) => x.interval);
      // 10 minutes, 1 hour, 2 days, 1 hour, 10 minutes
      expect(intervals).to.deep.equal([...Array(10).fill('1m'), '1h', '1d', '1d', '1h', ...Array(10).fill('1m')]);
      for (const row of rows) {
        const start = Date.parse(row.timestamp);
        const len = { '1m': 60_000, '1h': 3600_000, '1d': 86_400_000 }[row.interval as '1m'];
        close(row['10bps'], windowOf(minutes, start, start + len)!.spreadUp[L.indexOf(10)]!, `${row.timestamp}`);
      }
    });

    it('CSV has the JSON rows cell for cell (rows ClickHouse writes either way)', async () => {
      const from = Date.UTC(2026, 0, 4, 22, 50);
      const to = Date.UTC(2026, 0, 6, 1, 10);
      const span = `time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`;
      for (const path of [
        `/v2/metrics/uptime/spread/?assets=${w.asset},${w.asset}_PERP&interval=c&market_hours_timezone=Asia/Kolkata&bps=0.05,10,500&${span}`,
        `/v2/metrics/uptime/depth/?assets=${w.asset}&interval=4h&amounts=12345.5,25000&bps=50&${span}`,
        `/v2/metrics/uptime/spread/?assets=${w.asset}&interval=a&${span}`,
      ]) {
        const json = await call('GET', path, { token });
        const csv = await call('GET', `${path}&type=csv`, { token });
        expect(json.status, path).to.equal(200);
        expect(json.headers.get('content-type'), path).to.match(/^application\/json/);
        expect(csv.headers.get('content-disposition'), path).to.equal('attachment; filename="data.csv"');
        const [header, ...lines] = csv.text.trim().split('\n');
        expect(json.body.length, path).to.be.greaterThan(0);
        expect(header!.split(','), path).to.deep.equal(Object.keys(json.body[0]));
        expect(lines.map((l) => l.split(',')), path).to.deep.equal(json.body.map((r: Record<string, unknown>) => Object.values(r).map((v) => (v === null ? '' : String(v)))));
      }
    });

    it('answers an empty JSON array when no pair has data', async () => {
      const r = await call('GET', `/v2/metrics/uptime/spread/?assets=${w.asset}&interval=1h&time_start=2025-01-01T00:00:00Z&time_end=2025-01-02T00:00:00Z`, { token });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal([]);
    });
  });

  describe('leaderboard', () => {
    it('ranks pairs, sorts by any allowed column both ways, and pages by 20', async () => {
      const base = { assets: [w.asset, `${w.asset}_PERP`], time_start: new Date(D0).toISOString(), time_end: new Date(D1).toISOString(), bps: [1] };
      const byVolume = await call('POST', '/v2/leaderboard/', { token, json: { ...base, sort_by: 'volume' } });
      expect(byVolume.status).to.equal(200);
      expect(byVolume.body.map((x: { pair: string }) => x.pair)).to.deep.equal([spot, perp]); // the perp has no trades
      expect(Object.keys(byVolume.body[0])).to.deep.equal(['asset', 'exchange', 'pair', 'price_change', 'volume', 'usd_open_interest', 'funding_rate_8h', 'tick_bps', 'tick_bps_status', 'tick_bps_samples', 'bid_1bps', 'ask_1bps']);
      const ref = windowOf(minutes, D0, D1)!;
      close(byVolume.body[0].price_change, 100 * (ref.last_mid / ref.first_mid - 1), 'price_change');
      const asc = await call('POST', '/v2/leaderboard/', { token, json: { ...base, sort_by: 'bid_500bps', sort_direction: 'asc' } });
      const desc = await call('POST', '/v2/leaderboard/', { token, json: { ...base, sort_by: 'bid_500bps', sort_direction: 'desc' } });
      expect(asc.body.map((x: { pair: string }) => x.pair)).to.deep.equal([...desc.body.map((x: { pair: string }) => x.pair)].reverse());
      const perpOnly = await call('POST', '/v2/leaderboard/', { token, json: { ...base, market_type: 'perp' } });
      expect(perpOnly.body.map((x: { pair: string }) => x.pair)).to.deep.equal([perp]);
      const page2 = await call('POST', '/v2/leaderboard/', { token, json: { ...base, page: 2 } });
      expect(page2.body).to.deep.equal([]);
    });

    it('sorts by the level a non-canonical number names (bid_500.0bps is bid_500bps)', async () => {
      const base = { assets: [w.asset, `${w.asset}_PERP`], time_start: new Date(D0).toISOString(), time_end: new Date(D1).toISOString(), bps: [1] };
      for (const [written, canonical] of [['bid_500.0bps', 'bid_500bps'], ['ask_0.50bps', 'ask_0.5bps'], ['ask_010bps', 'ask_10bps']]) {
        for (const sort_direction of ['asc', 'desc']) {
          const r = await call('POST', '/v2/leaderboard/', { token, json: { ...base, sort_by: written, sort_direction } });
          const c = await call('POST', '/v2/leaderboard/', { token, json: { ...base, sort_by: canonical, sort_direction } });
          expect(r.status, JSON.stringify(r.body)).to.equal(200);
          expect(r.body, `${written} ${sort_direction}`).to.deep.equal(c.body);
        }
      }
      // The two rows differ in depth, so the order is not the same both ways: the level decides.
      const asc = await call('POST', '/v2/leaderboard/', { token, json: { ...base, sort_by: 'bid_500.0bps', sort_direction: 'asc' } });
      const desc = await call('POST', '/v2/leaderboard/', { token, json: { ...base, sort_by: 'bid_500.0bps', sort_direction: 'desc' } });
      expect(asc.body.map((x: { pair: string }) => x.pair)).to.deep.equal([...desc.body.map((x: { pair: string }) => x.pair)].reverse());
    });
  });

  describe('regional volume', () => {
    it('totals by region with percentages for interval a, and per bucket otherwise', async () => {
      const from = Date.UTC(2026, 0, 5);
      const to = Date.UTC(2026, 0, 6);
      const a = await call('GET', `/v2/metrics/volume/regional/?assets=${w.asset}&time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`, { token });
      expect(a.status).to.equal(200);
      const v = tradesOf(data.trades, from, to).volume;
      close(a.body[w.asset].total_volume, v, 'total');
      close(a.body[w.asset].regions.asia.volume, v, 'asia');
      expect(a.body[w.asset].regions.asia.percentage).to.equal(100);
      expect(a.body[w.asset].exchanges[w.ex].region).to.equal('asia');
      const daily = await call('GET', `/v2/metrics/volume/regional/?assets=${w.asset}&interval=1h&time_start=${new Date(from).toISOString()}&time_end=${new Date(from + 7200_000).toISOString()}`, { token });
      expect(daily.body).to.have.length(2);
      close(daily.body[0].regions.asia, tradesOf(data.trades, from, from + 3600_000).volume, 'hour 0');
    });

    it('answers CSV when asked: a row per asset and exchange for interval a, a column per region per bucket otherwise', async () => {
      const from = Date.UTC(2026, 0, 5);
      const to = Date.UTC(2026, 0, 6);
      const window = `time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`;
      const json = await call('GET', `/v2/metrics/volume/regional/?assets=${w.asset}&${window}`, { token });
      const csv = await call('GET', `/v2/metrics/volume/regional/?assets=${w.asset}&${window}&type=csv&filename=regions.csv`, { token });
      expect(csv.status).to.equal(200);
      expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
      expect(csv.headers.get('content-disposition')).to.equal('attachment; filename="regions.csv"');
      const [header, ...lines] = csv.text.trim().split('\n');
      expect(header).to.equal('asset,total_volume,region,region_volume,region_percentage,exchange,volume,percentage');
      const entry = json.body[w.asset];
      expect(lines).to.deep.equal([[w.asset, entry.total_volume, 'asia', entry.regions.asia.volume, 100, w.ex, entry.exchanges[w.ex].volume, 100].join(',')]);
      const hourly = await call('GET', `/v2/metrics/volume/regional/?assets=${w.asset}&interval=1h&time_start=${new Date(from).toISOString()}&time_end=${new Date(from + 7200_000).toISOString()}`, { token });
      const hourlyCsv = await call('GET', `/v2/metrics/volume/regional/?assets=${w.asset}&interval=1h&time_start=${new Date(from).toISOString()}&time_end=${new Date(from + 7200_000).toISOString()}&type=csv`, { token });
      const [h, ...rows] = hourlyCsv.text.trim().split('\n');
      expect(h).to.equal('timestamp,asset,total_volume,asia');
      expect(rows).to.deep.equal(hourly.body.map((r: { timestamp: string; asset: string; total_volume: number; regions: { asia: number } }) => [r.timestamp, r.asset, r.total_volume, r.regions.asia].join(',')));
    });
  });

  describe('invalid input', () => {
    const bad: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['/v2/metrics/uptime/spread/', { interval: '2h' }, { interval: ['"2h" is not a valid choice; expected one of: 1M, 1w, 1d, 4h, 1h, 30m, 15m, 5m, 1m, c, a.'] }],
      ['/v2/metrics/summary/', { interval: '1h' }, { interval: ['"1h" is not a valid choice; expected one of: a.'] }],
      ['/v2/metrics/uptime/spread/', { time_start: 'yesterday' }, { time_start: ['Enter a valid ISO 8601 date-time, e.g. 2026-06-25T10:00:00Z.'] }],
      ['/v2/metrics/uptime/spread/', { lookback: '1-day', time_start: '2026-01-05T00:00:00Z' }, { non_field_errors: ['lookback cannot be combined with time_start or time_end.'] }],
      ['/v2/metrics/uptime/spread/', { lookback: '2-days' }, { lookback: ['Not a valid choice; expected one of: 30-minutes, 1-hour, 3-hours, 6-hours, 12-hours, 1-day, 7-days, 1-month, 3-months, 6-months, 1-year.'] }],
      ['/v2/metrics/uptime/spread/', { market_hours_session: 'market-hours' }, { market_hours_days: ['This field is required with market_hours_session.'] }],
      ['/v2/metrics/uptime/spread/', { market_hours_session: 'market-hours', market_hours_days: 'this:1', lookback: '1-day' }, { non_field_errors: ['market_hours_session cannot be combined with time_start, time_end or lookback.'] }],
      ['/v2/metrics/uptime/spread/', { market_hours_session: 'market-hours', market_hours_days: 'next:1' }, { market_hours_days: ['Write a list of {week, day} or <week>:<day> (week this or last, day 0 to 6), or one comma-separated string.'] }],
      ['/v2/metrics/uptime/spread/', { market_hours_timezone: 'Mars/Olympus' }, { market_hours_timezone: ['"Mars/Olympus" is not a known time zone name (e.g. America/New_York).'] }],
      ['/v2/metrics/uptime/spread/', { assets: 'NOT-MINE' }, { assets: ['"NOT-MINE" is not one of your assets.'] }],
      ['/v2/metrics/uptime/spread/', { bps: '7' }, { bps: [`"7" is not a supported level; supported: ${L.join(', ')}.`] }],
      ['/v2/metrics/uptime/spread/', { bps: [7] }, { bps: [`"7" is not a supported level; supported: ${L.join(', ')}.`] }],
      ['/v2/metrics/uptime/spread/', { interval: null }, { interval: ['"null" is not a valid choice; expected one of: 1M, 1w, 1d, 4h, 1h, 30m, 15m, 5m, 1m, c, a.'] }],
      ['/v2/metrics/uptime/spread/', { lookback: 30 }, { lookback: ['Not a valid string.'] }],
      ['/v2/metrics/uptime/depth/', { amounts: '-5' }, { amounts: ['Expected a list of positive USD amounts, or one comma-separated string of them.'] }],
      ['/v2/leaderboard/', { sort_by: 'bid_7bps' }, { sort_by: [`"bid_7bps" is not sortable; use one of volume, price_change, usd_open_interest, funding_rate_8h, tick_bps, or bid_<L>bps / ask_<L>bps with L in ${L.join(', ')}.`] }],
      ['/v2/leaderboard/', { page: 0 }, { page: ['Ensure this value is greater than or equal to 1.'] }],
      ['/v2/leaderboard/', { market_type: 'futures' }, { market_type: ['Not a valid choice; expected one of: all, spot, perp.'] }],
      ['/v2/leaderboard/', { exchanges: 'nope' }, { exchanges: ['"nope" is not a known exchange.'] }],
      ['/v2/metrics/uptime/spread/', { interval: '1m', lookback: '1-month' }, {}],
    ];
    for (const [path, json, expected] of bad) {
      it(`${path} ${JSON.stringify(json)} -> 400`, async () => {
        const r = await call('POST', path, { token, json });
        expect(r.status, JSON.stringify(r.body)).to.equal(400);
        if (Object.keys(expected).length) expect(r.body).to.deep.equal(expected);
        else expect(r.body.interval[0]).to.match(/too long for interval "1m"/);
      });
    }

    it('more than 25 levels or 100 assets are refused', async () => {
      const levels = await call('GET', `/v2/metrics/uptime/spread/?bps=${[...L, 0].join(',')}`, { token });
      expect(levels.body.bps).to.include('Ensure this field has no more than 25 elements.');
      const assets = await call('GET', `/v2/metrics/uptime/spread/?assets=${Array.from({ length: 101 }, (_, i) => `X${i}`).join(',')}`, { token });
      expect(assets.body.assets[0]).to.equal('Ensure this field has no more than 100 elements.');
    });

    it('an empty list, in a JSON body or a query string, is the default on every endpoint', async () => {
      const window = { time_start: new Date(D0).toISOString(), time_end: new Date(D1).toISOString() };
      const paths = ['/v2/metrics/summary/', '/v2/leaderboard/', '/v2/metrics/uptime/spread/', '/v2/metrics/uptime/depth/', '/v2/metrics/volume/regional/'];
      for (const path of paths) {
        const interval: Record<string, string> = path.includes('uptime') || path.includes('regional') ? { interval: '1d' } : {};
        const plain = await call('POST', path, { token, json: { ...window, ...interval } });
        expect(plain.status, path).to.equal(200);
        const empty = await call('POST', path, { token, json: { ...window, ...interval, assets: [], exchanges: [], bps: [], amounts: [] } });
        expect(empty.status, `${path} ${JSON.stringify(empty.body)}`).to.equal(200);
        expect(empty.text, path).to.equal(plain.text);
        const blank = await call('POST', path, { token, json: { ...window, ...interval, assets: '', exchanges: '', bps: '', amounts: ' ' } });
        expect(blank.text, `${path} ${JSON.stringify(blank.body)}`).to.equal(plain.text);
        const query = new URLSearchParams({ ...window, ...interval, assets: '', exchanges: '', bps: '' });
        expect((await call('GET', `${path}?${query}`, { token })).text, path).to.equal(plain.text);
      }
      // And the default is all of the caller's assets: both of the owner's pairs have rows.
      const summary = await call('POST', '/v2/metrics/summary/', { token, json: { ...window, assets: [] } });
      expect(summary.body.map((r: { pair: string }) => r.pair).sort()).to.deep.equal([spot, perp].sort());
    });

    it('a list reads the same in a query string and in a JSON body: spaces around items and empty items ignored', async () => {
      const window = { time_start: new Date(D0).toISOString(), time_end: new Date(D1).toISOString(), interval: '1d' };
      const want = await call('POST', '/v2/metrics/uptime/depth/', { token, json: { ...window, bps: [1, 10], amounts: [1000, 5000] } });
      expect(want.status, JSON.stringify(want.body)).to.equal(200);
      for (const [bps, amounts] of [['1,10', '1000,5000'], ['1, 10', '1000 , 5000'], ['1,10,', ',1000,,5000']] as [string, string][]) {
        const posted = await call('POST', '/v2/metrics/uptime/depth/', { token, json: { ...window, bps, amounts } });
        expect([bps, posted.status, posted.text]).to.deep.equal([bps, 200, want.text]);
        const asked = await call('GET', `/v2/metrics/uptime/depth/?${new URLSearchParams({ ...window, bps, amounts })}`, { token });
        expect([bps, asked.status, asked.text]).to.deep.equal([bps, 200, want.text]);
      }
      // A repeated query key with the same value is that value.
      const twice = await call('GET', `/v2/metrics/uptime/depth/?${new URLSearchParams({ ...window, bps: '1,10', amounts: '1000,5000' })}&interval=1d`, { token });
      expect([twice.status, twice.text]).to.deep.equal([200, want.text]);
    });

    it("the leaderboard checks `interval` but ranks over the whole window: no interval's span bound applies", async () => {
      const window = { time_start: new Date(D0).toISOString(), time_end: new Date(D1).toISOString() };
      const whole = await call('POST', '/v2/leaderboard/', { token, json: window });
      const minutes = await call('POST', '/v2/leaderboard/', { token, json: { ...window, interval: '1m' } });
      expect([minutes.status, minutes.text]).to.deep.equal([200, whole.text]);
      expect((await call('GET', '/v2/leaderboard/?lookback=1-year&interval=1m', { token })).status).to.equal(200);
      expect((await call('GET', '/v2/leaderboard/?interval=2h', { token })).body).to.deep.equal({ interval: ['"2h" is not a valid choice; expected one of: 1M, 1w, 1d, 4h, 1h, 30m, 15m, 5m, 1m, c, a.'] });
    });

    it('needs authentication', async () => {
      expect((await call('GET', '/v2/metrics/summary/')).status).to.equal(401);
    });
  });

  // Runs last: it adds order-book data of its own for the second spot pair.
  describe('uptime rows of sealed buckets, kept between requests', () => {
    const cache = () => testStack().service.deps.uptimeCache;
    /** The same request with the cache off, first (not kept), cold (kept) and warm: the bytes of each. */
    const threeWays = async (path: string, opts: { kept?: boolean } = {}) => {
      const limit = cache().maxBytes;
      cache().maxBytes = 0;
      let direct;
      try {
        direct = await call('GET', path, { token });
      } finally {
        cache().maxBytes = limit;
      }
      cache().clear();
      // Asked for the first time: answered without filling the cache; the second time, filled.
      const first = await call('GET', path, { token });
      expect(cache().size, `${path}: kept on first sight`).to.equal(0);
      const cold = await call('GET', path, { token });
      // A rollup write landing between two requests makes the second compute again: ask
      // until one is served from the cache (when the window has whole sealed buckets).
      const warm = await waitFor('a request served from the cache', async () => {
        const hits = cache().hits;
        const r = await call('GET', path, { token });
        return (cache().hits > hits || opts.kept === false) && r;
      });
      return { direct, first, cold, warm };
    };

    it('are the bytes the uncached answer has, at every fixed interval and zone', async () => {
      const span = (from: number, to: number) => `time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`;
      const wide = span(Date.UTC(2026, 0, 4, 22, 17, 30), Date.UTC(2026, 0, 7, 1, 43));
      for (const [path, kept] of [
        // No whole bucket in the window: every bucket is computed.
        [`/v2/metrics/uptime/spread/?assets=${w.asset},${w.asset}_PERP&interval=1w&${wide}`, false],
        [`/v2/metrics/uptime/spread/?assets=${w.asset}&interval=1M&market_hours_timezone=Australia/Lord_Howe&${wide}`, false],
        [`/v2/metrics/uptime/spread/?assets=${w.asset}&interval=15m&market_hours_timezone=Asia/Kolkata&bps=0.05,10&${wide}`, true],
        [`/v2/metrics/uptime/depth/?assets=${w.asset}&interval=4h&market_hours_timezone=America/New_York&${wide}`, true],
        [`/v2/metrics/uptime/depth/?assets=${w.asset}&interval=1d&amounts=12345.5,25000&bps=50&${wide}`, true],
        [`/v2/metrics/uptime/spread/?assets=${w.asset},${w.asset}_PERP&interval=1h&${wide}`, true],
      ] as const) {
        const { direct, first, cold, warm } = await threeWays(path, { kept });
        expect(direct.status, path).to.equal(200);
        expect(direct.body.length, path).to.be.greaterThan(0);
        expect(first.text, `${path} first`).to.equal(direct.text);
        expect(cold.text, `${path} cold`).to.equal(direct.text);
        expect(warm.text, `${path} warm`).to.equal(direct.text);
      }
      // What it holds (the last view's rows: each view above began with the cache emptied) and saved, for operators.
      const staff = await login(w.users.staff.email, w.password);
      const status = (await call('GET', '/v1/admin/status/', { token: staff })).body.uptime_cache;
      expect(status).to.include({ enabled: true, max_bytes: testStack().config.uptimeCacheBytes });
      expect(status.bytes).to.equal(cache().bytes).and.be.greaterThan(0);
      expect(status.bucket_hits).to.be.greaterThan(0);
      const windows = (await call('GET', '/v1/admin/status/', { token: staff })).body.window_cache;
      expect(windows).to.include({ enabled: true, bytes: testStack().service.deps.windowCache.bytes });
      // The processors running here have marked the hour their clock sealed, or a later one.
      const { rolled_up_to, market_rolled_up_to } = (await call('GET', '/v1/admin/status/', { token: staff })).body.rollups;
      const sealed = Date.now() - testStack().config.latenessMs - 60_000;
      const sealedHour = Math.floor(sealed / 3_600_000) * 3_600_000;
      expect(Date.parse(rolled_up_to)).to.be.within(sealedHour - 3_600_000, sealedHour);
      // The market families' mark, to their last step inside the hour at most.
      expect(Date.parse(market_rolled_up_to)).to.be.within(Date.parse(rolled_up_to), Math.floor(sealed / OPEN_STEP_MS) * OPEN_STEP_MS);
    });

    it('a view of more rows than a third of the cache holds is answered whole and not kept', async () => {
      const span = `time_start=${new Date(Date.UTC(2026, 0, 4, 22, 17, 30)).toISOString()}&time_end=${new Date(Date.UTC(2026, 0, 7, 1, 43)).toISOString()}`;
      const path = `/v2/metrics/uptime/spread/?assets=${w.asset},${w.asset}_PERP&interval=1h&${span}`;
      const limit = cache().maxBytes;
      const rows = (await call('GET', path, { token })).body.length as number;
      expect(rows).to.be.greaterThan(10);
      // The largest power-of-two size whose bound is under the view's rows: still ample for its segments.
      let bytes = 64 * 2 ** 20;
      while (maxCachedRows(bytes) >= rows) bytes /= 2;
      expect(bytes).to.be.greaterThan(rows * 450);
      cache().maxBytes = bytes;
      cache().clear();
      try {
        const answers = [];
        for (let i = 0; i < 3; i++) answers.push(await call('GET', path, { token }));
        expect(cache().size).to.equal(0);
        for (const a of answers) expect(a.text).to.equal(answers[0]!.text);
      } finally {
        cache().maxBytes = limit;
      }
      // The same view with the cache at its size is kept from its second request on.
      cache().clear();
      for (let i = 0; i < 2; i++) await call('GET', path, { token });
      expect(cache().size).to.be.greaterThan(0);
    });

    it('summary and leaderboard: the sealed pieces of a window kept give the uncached answer', async () => {
      const windowCache = () => testStack().service.deps.windowCache;
      // Minute, hour and day pieces, all sealed; the window ends mid-hour.
      const span = { time_start: new Date(Date.UTC(2026, 0, 4, 22, 17, 30)).toISOString(), time_end: new Date(Date.UTC(2026, 0, 7, 1, 43)).toISOString() };
      for (const [path, json] of [
        ['/v2/metrics/summary/', { assets: [w.asset, `${w.asset}_PERP`], ...span }],
        ['/v2/leaderboard/', { ...span, sort_by: 'bid_10bps' }],
      ] as const) {
        const limit = windowCache().maxBytes;
        windowCache().maxBytes = 0;
        let direct;
        try {
          direct = await call('POST', path, { token, json });
        } finally {
          windowCache().maxBytes = limit;
        }
        windowCache().clear();
        // Asked for the first time, the window's pieces are summed in one partial, not kept.
        const first = await call('POST', path, { token, json });
        expect(windowCache().size, path).to.equal(0);
        const cold = await call('POST', path, { token, json });
        expect(windowCache().size, path).to.be.greaterThan(0);
        const hits = windowCache().hits;
        const warm = await call('POST', path, { token, json });
        expect(windowCache().hits, path).to.be.greaterThan(hits);
        expect(direct.body.length, path).to.be.greaterThan(0);
        for (const r of [first, cold, warm]) {
          expect(r.body.map((x: object) => Object.keys(x)), path).to.deep.equal(direct.body.map((x: object) => Object.keys(x)));
          same(r.body, direct.body, path);
        }
      }
    });

    it('window pieces: with the clock inside the window, the open piece is computed each time and merged with the kept ones, first seen or kept', async () => {
      const { service } = testStack();
      const market = new PartialsRepository(service.deps.ch);
      const end = Date.UTC(2026, 0, 7, 1, 43);
      const q = { pairs: [{ exchange: w.ex, pair: spot }, { exchange: w.ex, pair: perp }], interval: 'a' as const, zone: 'UTC', pieces: planBuckets('a', [[Date.UTC(2026, 0, 4, 22, 17, 30), end]], 'UTC', Infinity).pieces };
      const cache = new PartialsCache(1 << 24);
      // Now is 30 s after the window's end: the minutes of 01:00-01:43 are open, the rest
      // sealed. No hour blocks (more pairs than they serve): minutes are pieces too.
      const partials = new WindowPartials(market, new WriteCounts(service.deps.ch), cache, { latenessMs: 30_000, now: () => end + 30_000 }, 0);
      const [book, trade, derivative] = await Promise.all([market.read('book', q), market.read('trade', q), market.read('derivative', q)]);
      const direct = { book, trade, derivative };
      expect(book.length).to.equal(2);
      expect(derivative.length).to.equal(1);
      const sealed = 3 * (q.pieces.length - 1);
      const first = await partials.window(q);
      expect([cache.misses, cache.size]).to.deep.equal([sealed, 0]);
      const cold = await partials.window(q);
      expect([cache.misses, cache.size]).to.deep.equal([2 * sealed, sealed]);
      const warm = await partials.window(q);
      expect(cache.hits).to.equal(sealed);
      same(first, direct, 'first');
      same(cold, direct, 'cold');
      same(warm, direct, 'warm');
      // Another start, the same end: the kept pieces it shares are used, its new first
      // piece (asked for the first time) is summed with the open one.
      const q2 = { ...q, pieces: planBuckets('a', [[Date.UTC(2026, 0, 4, 22, 47), end]], 'UTC', Infinity).pieces };
      const hits = cache.hits;
      const [book2, trade2, derivative2] = await Promise.all([market.read('book', q2), market.read('trade', q2), market.read('derivative', q2)]);
      same(await partials.window(q2), { book: book2, trade: trade2, derivative: derivative2 }, 'another start');
      expect(cache.hits - hits).to.equal(3 * (q2.pieces.length - 2));
      expect(cache.size).to.equal(sealed);
    });

    it("hour blocks: a window's minutes are merged from the minutes of whole hours kept, which any other start or end within those hours reuses", async () => {
      const { service } = testStack();
      const market = new PartialsRepository(service.deps.ch);
      const end = Date.UTC(2026, 0, 7, 1, 43);
      const pairs = [{ exchange: w.ex, pair: spot }, { exchange: w.ex, pair: perp }];
      const windowOf = (from: number, to: number) => ({ pairs, interval: 'a' as const, zone: 'UTC', pieces: planBuckets('a', [[from, to]], 'UTC', Infinity).pieces });
      const direct = async (q: ReturnType<typeof windowOf>) => {
        const [book, trade, derivative] = await Promise.all([market.read('book', q), market.read('trade', q), market.read('derivative', q)]);
        return { book, trade, derivative };
      };
      const cache = new PartialsCache(1 << 24);
      // The clock 30 s after the end: the minutes of 01:00-01:43 are open, and come from
      // the block of 01:00 all the same, kept at its hour's write count.
      const partials = new WindowPartials(market, new WriteCounts(service.deps.ch), cache, { latenessMs: 30_000, now: () => end + 30_000 });
      const q = windowOf(Date.UTC(2026, 0, 4, 22, 17, 30), end);
      // Hour, day and hour pieces kept; the minute pieces' two hours (22:00 and 01:00) as blocks.
      const entries = 3 * (q.pieces.filter((p) => p.table !== 'minutes').length + 2);
      const want = await direct(q);
      same(await partials.window(q), want, 'first');
      expect([cache.misses, cache.size]).to.deep.equal([entries, 0]);
      same(await partials.window(q), want, 'cold');
      expect([cache.misses, cache.size]).to.deep.equal([2 * entries, entries]);
      same(await partials.window(q), want, 'warm');
      expect(cache.hits).to.equal(entries);
      // Other starts and ends inside the same hours: nothing computed, the same answer as uncached.
      for (const [from, to] of [
        [Date.UTC(2026, 0, 4, 22, 47), end],
        [Date.UTC(2026, 0, 4, 22, 0, 30), Date.UTC(2026, 0, 7, 1, 5, 10)],
        [Date.UTC(2026, 0, 4, 22, 59, 59), Date.UTC(2026, 0, 7, 1, 0, 1)],
      ]) {
        const other = windowOf(from!, to!);
        const [hits, misses] = [cache.hits, cache.misses];
        same(await partials.window(other), await direct(other), `${new Date(from!).toISOString()}-${new Date(to!).toISOString()}`);
        expect(cache.misses).to.equal(misses);
        expect(cache.hits).to.be.greaterThan(hits);
      }
      // A window inside one hour: its minutes merged one by one from the block.
      const inside = windowOf(Date.UTC(2026, 0, 7, 1, 10, 30), Date.UTC(2026, 0, 7, 1, 20));
      const misses = cache.misses;
      same(await partials.window(inside), await direct(inside), 'inside an hour');
      expect(cache.misses).to.equal(misses);
      expect(cache.size).to.equal(entries);
      // Requests at the same time read the write counts once (the first one's days cover the others').
      const reads = partials.counts.reads;
      const answers = await Promise.all([q, inside, q, windowOf(Date.UTC(2026, 0, 5, 3), end)].map((x) => partials.window(x)));
      expect(partials.counts.reads - reads).to.equal(1);
      same(answers[2], want, 'at the same time');
    });

    it('computes a sealed bucket again once its hours are written again (a backfill of a quiet hour)', async () => {
      const { kafka, config } = testStack();
      const pair = `${w.asset}/USD`;
      const H = Date.UTC(2026, 0, 8, 10);
      // Two snapshots a minute; spread 0.5 bps in the first batch, 50 bps in the second.
      const books = (fromMinute: number, spreadBps: number) =>
        Array.from({ length: 20 }, (_, i) => {
          const half = (100 * spreadBps) / 2e4;
          return { exchange: w.ex2, pair, ts: H + (fromMinute + Math.floor(i / 2)) * 60_000 + (i % 2) * 20_000, bids: [[100 - half, 5]], asks: [[100 + half, 5]] };
        });
      const producer = kafka.producer();
      await producer.connect();
      const send = (messages: object[]) => producer.send({ topic: topicName(config, 'md.orderbook'), messages: messages.map((m) => ({ key: `${w.ex2}:${pair}`, value: JSON.stringify(m) })) });
      const window = `time_start=${new Date(H).toISOString()}&time_end=${new Date(H + 3600_000).toISOString()}`;
      const samples = async () => {
        const r = await call('GET', `/v2/metrics/summary/?assets=${w.asset}&${window}`, { token });
        return (r.body as { pair: string; tick_bps_samples: number }[]).find((x) => x.pair === pair)?.tick_bps_samples ?? 0;
      };
      const path = `/v2/metrics/uptime/spread/?assets=${w.asset}&interval=1h&bps=1,100&${window}`;
      const row = (r: { body: { pair: string }[] }) => r.body.find((x) => x.pair === pair) as Record<string, number> | undefined;
      try {
        await send(books(0, 0.5));
        await waitFor('the first batch written', async () => (await samples()) === 20, 30_000);
        const before = await threeWays(path);
        expect(row(before.warm)?.['1bps']).to.equal(100);
        expect(before.warm.text).to.equal(before.direct.text);

        // Minutes 20-29 of the same hour: newer than the pair's last event, so not late.
        await send(books(20, 50));
        await waitFor('the second batch written', async () => (await samples()) === 40, 30_000);
        const after = await waitFor('the bucket computed again', async () => {
          const r = await call('GET', path, { token });
          return row(r)?.['1bps'] !== 100 && r;
        }, 10_000);
        expect(row(after)?.['1bps']).to.equal(50);
        // Summary over the same hour (kept between requests too) has both batches: samples() waited for 40.
        expect(row(after)?.['100bps']).to.equal(100);
        cache().maxBytes = 0;
        try {
          expect(after.text).to.equal((await call('GET', path, { token })).text);
        } finally {
          cache().maxBytes = config.uptimeCacheBytes;
        }
      } finally {
        await producer.disconnect();
      }
    });
  });
});
