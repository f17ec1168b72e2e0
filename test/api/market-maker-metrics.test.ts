// The market-maker endpoints (specification 4.10-4.12, and the reconciliation) over data
// that went through the real pipeline: public books and trades, two market makers' own
// orders and fills, and their pushed reports. Expected values are computed here from the
// definitions of addendum section 4; each role's view is checked for what it shows and
// what it hides.
import { expect } from 'chai';
import { topicName } from '../../lib/kafka.ts';
import { call, login, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
type Row = Record<string, unknown> & { organization: { slug: string; name: string }; pair: string; exchange: string; asset: string };

describe('market-maker metrics (summary, trusted depth, reported volume, reconciliation)', function () {
  this.timeout(120_000);
  const w = world();
  const mm2 = `mm2-${w.tag}`;
  const project2 = `proj2-${w.tag}`;
  const assetC = `C${w.tag.toUpperCase()}`;
  const spot = `${w.asset}/USDT`;
  const usd = `${w.asset}/USD`;
  const pairC = `${assetC}/USDT`;
  const wallet1 = w.fixture.wallets![0]!.id;
  const wallet2 = wallet1 + 20_000_000;
  w.fixture.organizations!.push({ slug: mm2, name: `Maker two ${w.tag}`, kind: 'market_maker' }, { slug: project2, name: `Project two ${w.tag}`, kind: 'project' });
  w.fixture.assets!.push({ symbol: assetC, name: 'C', owner: project2 });
  w.fixture.pairs!.push({ exchange: w.ex, pair: pairC, asset: assetC, market_type: 'spot' });
  // The first market maker covers the asset on both exchanges.
  w.fixture.coverage = [
    { organization: w.mm, assets: [w.asset], exchanges: [w.ex, w.ex2] },
    { organization: mm2, assets: [w.asset, assetC], exchanges: [w.ex] },
  ];
  w.fixture.wallets!.push({ id: wallet2, organization: mm2, number: 3, exchange: w.ex });
  const users = {
    ...w.users,
    maker2: { email: `maker2-${w.tag}@test.example`, username: `maker2-${w.tag}`, password: w.password, organizations: [mm2] },
    owner2: { email: `owner2-${w.tag}@test.example`, username: `owner2-${w.tag}`, password: w.password, organizations: [project2] },
  };
  w.fixture.users = Object.values(users);
  const tokens: Record<keyof typeof users, string> = {} as never;

  // Two days back: a whole UTC day, its minute at 10:00 holds everything.
  const D = Math.floor(Date.now() / DAY) * DAY - 2 * DAY;
  const T = D + 10 * HOUR;
  const window = { time_start: iso(D), time_end: iso(D + DAY) };

  // Public book: mid 100; depth within 100 bps: bids 99 x 100, asks 101 x 100. Trades: 5,000 USD.
  const market = { bid100: 9900, ask100: 10100, volume: 5000 };
  // Market maker 1 (honest): bid 99.5 x 10 and ask 100.5 x 10, fills 1,000 USD; reports the truth.
  const m1 = { bid: 995, ask: 1005, volume: 1000 };
  // Market maker 2 (overstating): bid 99.5 x 1; reports 500 within 100 bps.
  const m2 = { bid: 99.5, ask: 100.5, volume: 0, reportedBid100: 500 };

  async function send(topic: 'mm.orders' | 'mm.fills' | 'md.orderbook' | 'md.trades', values: object[]) {
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: topicName(config, topic), messages: values.map((v) => ({ key: `${w.ex}:${spot}`, value: JSON.stringify(v) })) });
    await producer.disconnect();
  }
  const get = <T = Row[]>(who: keyof typeof users, path: string, q: Record<string, string> = {}) => call<T>('GET', `${path}?${new URLSearchParams({ ...window, ...q })}`, { token: tokens[who] });
  const SUMMARY = '/v2/organizations/market-maker-metrics/summary/';
  const DEPTH = '/v2/organizations/trusted-metrics/depth/';
  const VOLUME = '/v2/organizations/reported-metrics/volume/';
  const RECON = '/v2/organizations/market-maker-metrics/reconciliation/';
  const keyOf = (r: Row) => `${r.organization.slug} ${r.exchange} ${r.pair}`;
  const report = (organization: string, asset: string, exchange: string, pair: string, metric: string, value: number, interval = '1d', timestamp = D) => ({
    organization,
    asset,
    exchange,
    pair,
    metric,
    interval,
    timestamp: iso(timestamp),
    value,
  });

  before(async () => {
    await seed(w.fixture);
    for (const who of Object.keys(users) as (keyof typeof users)[]) tokens[who] = await login(users[who].email, w.password);
    await send('md.orderbook', [{ exchange: w.ex, pair: spot, ts: T + 1_000, bids: [[99, 100]], asks: [[101, 100]] }]);
    await send('md.trades', [{ exchange: w.ex, pair: spot, ts: T + 2_000, price: 100, amount: 50, side: 'buy', id: 't1' }]);
    await send('mm.orders', [
      { organization: w.mm, wallet_id: wallet1, exchange: w.ex, pair: spot, ts: T + 3_000, bids: [[99.5, 10]], asks: [[100.5, 10]] },
      { organization: mm2, wallet_id: wallet2, exchange: w.ex, pair: spot, ts: T + 3_000, bids: [[99.5, 1]], asks: [[100.5, 1]] },
    ]);
    await send('mm.fills', [
      { organization: w.mm, wallet_id: wallet1, exchange: w.ex, pair: spot, ts: T + 4_000, price: 100, amount: 5, side: 'buy', id: 'f1' },
      { organization: w.mm, wallet_id: wallet1, exchange: w.ex, pair: spot, ts: T + 5_000, price: 100, amount: 5, side: 'sell', id: 'f2' },
    ]);
    const pushed = [
      call('POST', '/v2/organizations/reported-metrics/', {
        token: tokens.maker,
        json: [
          report(w.mm, w.asset, w.ex, spot, 'volume/volume', m1.volume),
          report(w.mm, w.asset, w.ex, spot, 'depth/bid_100bps', m1.bid),
          // Hourly, on the other exchange, where it has no wallet: the reported row stands.
          report(w.mm, w.asset, w.ex2, usd, 'volume/volume', 250, '1h', D + 10 * HOUR),
          report(w.mm, w.asset, w.ex2, usd, 'volume/volume', 150, '1h', D + 12 * HOUR),
          report(w.mm, w.asset, w.ex2, usd, 'volume/volume', 400, '1d', D),
        ],
      }),
      call('POST', '/v2/organizations/reported-metrics/', {
        token: tokens.maker2,
        json: [report(mm2, w.asset, w.ex, spot, 'depth/bid_100bps', m2.reportedBid100), report(mm2, assetC, w.ex, pairC, 'volume/volume', 777)],
      }),
    ];
    for (const r of await Promise.all(pushed)) expect(r.status, r.text).to.equal(202);
    // Everything is in once staff see both wallets' rows and all three reported volume series.
    await waitFor(
      'the trusted and reported values',
      async () => {
        const [s, v] = await Promise.all([get('staff', SUMMARY, { bps: '100' }), get('staff', VOLUME)]);
        const trusted = s.body.filter((r) => r.is_trusted && r.volume_coverage !== null);
        return trusted.length === 2 && v.body.length === 3;
      },
      60_000,
    );
  });

  it('summary: trusted rows replace reported ones per organization, exchange, pair and bucket, with coverage of the whole market', async () => {
    const r = await get('staff', SUMMARY, { bps: '50,100' });
    expect(r.status).to.equal(200);
    const rows = r.body.filter((x) => [w.mm, mm2].includes(x.organization.slug));
    expect(rows.map(keyOf)).to.deep.equal([`${w.mm} ${w.ex} ${spot}`, `${w.mm} ${w.ex2} ${usd}`, `${mm2} ${w.ex} ${spot}`, `${mm2} ${w.ex} ${pairC}`]);
    const [t1, rep1, t2, rep2] = rows as [Row, Row, Row, Row];
    expect(Object.keys(t1)).to.deep.equal([
      'organization', 'asset', 'exchange', 'pair', 'timestamp', 'is_trusted', 'source', 'wallet_id', 'wallet_number', 'volume', 'volume_coverage',
      'bid_50bps', 'bid_100bps', 'ask_50bps', 'ask_100bps', 'bid_50bps_coverage', 'bid_100bps_coverage', 'ask_50bps_coverage', 'ask_100bps_coverage',
    ]);
    expect(t1).to.include({ asset: w.asset, timestamp: iso(D), is_trusted: true, source: 'wallet', wallet_id: wallet1, wallet_number: 1, volume: m1.volume });
    expect(t1.organization).to.deep.equal({ slug: w.mm, name: `Maker ${w.tag}` });
    expect(t1.volume_coverage).to.be.closeTo((100 * m1.volume) / market.volume, 1e-9);
    expect(t1.bid_100bps).to.be.closeTo(m1.bid, 1e-9);
    expect(t1.bid_50bps).to.be.closeTo(m1.bid, 1e-9);
    expect(t1.ask_100bps).to.be.closeTo(m1.ask, 1e-9);
    expect(t1.bid_100bps_coverage).to.be.closeTo((100 * m1.bid) / market.bid100, 1e-9);
    expect(t1.ask_100bps_coverage).to.be.closeTo((100 * m1.ask) / market.ask100, 1e-9);
    // The market had nothing within 50 bps: coverage unknown.
    expect(t1.bid_50bps_coverage).to.equal(null);
    // Reported only: the daily value of the bucket; no market data on that pair, no coverage.
    expect(rep1).to.include({ is_trusted: false, source: 'organization', wallet_id: null, wallet_number: null, volume: 400, volume_coverage: null, bid_100bps: null });
    expect(t2).to.include({ is_trusted: true, wallet_id: wallet2, wallet_number: 3, volume: 0 });
    expect(t2.bid_100bps).to.be.closeTo(m2.bid, 1e-9);
    expect(rep2).to.include({ asset: assetC, source: 'organization', volume: 777 });
  });

  it('summary: interval a has no timestamp; an interval the values are not kept in gives daily buckets; CSV has the same columns', async () => {
    const a = await get('staff', SUMMARY, { bps: '100', interval: 'a', organizations: w.mm });
    expect(a.body).to.have.length(2);
    expect(a.body[0]).to.not.have.property('timestamp');
    expect(a.body[0]!.volume).to.equal(m1.volume);
    const h4 = await get('staff', SUMMARY, { bps: '100', interval: '4h', organizations: w.mm });
    expect(h4.body.map((x) => x.timestamp)).to.deep.equal([iso(D), iso(D)]);
    const csv = await call('GET', `${SUMMARY}?${new URLSearchParams({ ...window, bps: '100', organizations: w.mm, type: 'csv', filename: 'mm.csv' })}`, { token: tokens.staff });
    expect(csv.headers.get('content-disposition')).to.contain('mm.csv');
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).to.equal('organization,asset,exchange,pair,timestamp,is_trusted,source,wallet_id,wallet_number,volume,volume_coverage,bid_100bps,ask_100bps,bid_100bps_coverage,ask_100bps_coverage');
    expect(lines[1], lines[1]).to.satisfy((l: string) => l.startsWith(`${w.mm},${w.asset},${w.ex},${spot},${iso(D)},true,wallet,${wallet1},1,1000,20,`));
  });

  it('trusted depth: the wallets of a market maker on a pair, per bucket', async () => {
    const r = await get('staff', DEPTH, { bps: '100' });
    const rows = r.body.filter((x) => [w.mm, mm2].includes(x.organization.slug));
    expect(rows.map(keyOf)).to.deep.equal([`${w.mm} ${w.ex} ${spot}`, `${mm2} ${w.ex} ${spot}`]);
    expect(Object.keys(rows[0]!)).to.deep.equal(['organization', 'asset', 'exchange', 'pair', 'timestamp', 'bid_100bps', 'ask_100bps']);
    expect(rows[0]!.bid_100bps).to.be.closeTo(m1.bid, 1e-9);
    expect(rows[1]!.ask_100bps).to.be.closeTo(m2.ask, 1e-9);
  });

  it('reported volume: every bucket of the window, 0 where nothing was reported; its own set of intervals', async () => {
    const r = await get('staff', VOLUME, { interval: '1h', time_start: iso(D + 10 * HOUR), time_end: iso(D + 13 * HOUR), organizations: w.mm });
    expect(r.status).to.equal(200);
    const usdRows = r.body.filter((x) => x.pair === usd);
    expect(usdRows.map((x) => [x.timestamp, x.volume])).to.deep.equal([
      [iso(D + 10 * HOUR), 250],
      [iso(D + 11 * HOUR), 0],
      [iso(D + 12 * HOUR), 150],
    ]);
    expect(Object.keys(usdRows[0]!)).to.deep.equal(['organization', 'asset', 'exchange', 'pair', 'timestamp', 'volume']);
    // `a`: the coarsest interval reported in the window, the daily value here.
    const a = await get('staff', VOLUME, { interval: 'a', organizations: w.mm });
    expect(a.body.find((x) => x.pair === usd)).to.deep.include({ volume: 400 });
    const bad = await get('staff', VOLUME, { interval: '1m' });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.have.property('interval');
  });

  it('reported volume: a window starting inside a bucket shows that bucket\'s report; a report counts in the bucket of the zone it lies within', async () => {
    const usdRows = async (q: Record<string, string>) => (await get('staff', VOLUME, { organizations: w.mm, ...q })).body.filter((x) => x.pair === usd).map((x) => [x.timestamp, x.volume]);
    // From 10:30: the 10:00 hour is the window's first bucket, and its report is there.
    expect(await usdRows({ interval: '1h', time_start: iso(D + 10 * HOUR + 30 * MINUTE), time_end: iso(D + 12 * HOUR) })).to.deep.equal([
      [iso(D + 10 * HOUR), 250],
      [iso(D + 11 * HOUR), 0],
    ]);
    // Days of New York are no UTC days: the daily report lies in none of them, and the pair,
    // with no reported volume in any bucket, has no rows.
    expect(await usdRows({ interval: '1d' })).to.deep.equal([[iso(D), 400]]);
    expect(await usdRows({ interval: '1d', market_hours_timezone: 'America/New_York' })).to.deep.equal([]);
    // Hours of Kolkata start at half past a UTC hour: an hourly report lies in none of them.
    expect(await usdRows({ interval: '1h', market_hours_timezone: 'Asia/Kolkata', time_start: iso(D + 9 * HOUR), time_end: iso(D + 14 * HOUR) })).to.deep.equal([]);
    // `a` tiles the window coarsest first: the day D by its daily report (its hours' reports in
    // it not again), the day before, reported only hourly, by its hour.
    const pushed = await call('POST', '/v2/organizations/reported-metrics/', {
      token: tokens.maker,
      json: [
        report(w.mm, w.asset, w.ex2, usd, 'volume/volume', 30, '1h', D - 2 * HOUR),
        report(w.mm, w.asset, w.ex2, usd, 'depth/bid_100bps', 600, '1h', D - 2 * HOUR),
        report(w.mm, w.asset, w.ex2, usd, 'depth/bid_100bps', 900, '1d', D),
        report(w.mm, w.asset, w.ex2, usd, 'depth/bid_100bps', 5, '1h', D + 10 * HOUR),
      ],
    });
    expect(pushed.status, pushed.text).to.equal(202);
    const wide = { interval: 'a', time_start: iso(D - 3 * HOUR), time_end: iso(D + DAY) };
    await waitFor('the hourly report of the day before', async () => (await usdRows(wide)).some(([, v]) => v === 430), 30_000);
    // Depth: the mean of the tiles weighted by their length, an hour as 12 five minutes and a day as 288.
    const summary = await get('staff', SUMMARY, { ...wide, bps: '100', organizations: w.mm });
    const reported = summary.body.find((x) => x.pair === usd && !x.is_trusted)!;
    expect(reported.volume).to.equal(430);
    expect(reported.bid_100bps).to.be.closeTo((12 * 600 + 288 * 900) / 300, 1e-9);
    // New York hours are whole UTC hours: they hold the hourly reports.
    const nyHours = await usdRows({ interval: '1h', market_hours_timezone: 'America/New_York', time_start: iso(D + 10 * HOUR), time_end: iso(D + 13 * HOUR) });
    expect(nyHours.map(([, v]) => v)).to.deep.equal([250, 0, 150]);
  });

  it('reconciliation: flags the report that exceeds the measurement, not the honest one', async () => {
    const r = await get('staff', RECON, { bps: '100' });
    const rows = r.body.filter((x) => [w.mm, mm2].includes(x.organization.slug));
    expect(rows.map(keyOf)).to.deep.equal([`${w.mm} ${w.ex} ${spot}`, `${mm2} ${w.ex} ${spot}`]);
    const [honest, over] = rows as [Row, Row];
    expect(honest).to.include({ flag: false, volume_reported: m1.volume, volume_trusted: m1.volume, volume_diff_pct: 0, bid_100bps_flag: false, tolerance_pct: 10 });
    expect(honest.flagged).to.deep.equal([]);
    expect(over).to.include({ flag: true, bid_100bps_reported: m2.reportedBid100, bid_100bps_flag: true, volume_reported: null, volume_flag: false });
    expect(over.bid_100bps_trusted).to.be.closeTo(m2.bid, 1e-9);
    expect(over.bid_100bps_diff_pct).to.be.closeTo((100 * (m2.reportedBid100 - m2.bid)) / m2.bid, 1e-9);
    expect(over.flagged).to.deep.equal(['bid_100bps']);
    // A tolerance above the overstatement clears the flag.
    const lenient = await get('staff', RECON, { bps: '100', organizations: mm2, tolerance_pct: '500' });
    expect(lenient.body[0]).to.include({ flag: false });
    expect((await get('staff', RECON, { tolerance_pct: '-1' })).status).to.equal(400);
  });

  it('summary: a sealed day is answered from the kept text while nothing is written into it, and a later push into it shows', async () => {
    const sealed = testStack().service.deps.marketMakerCaches.summary;
    const q = { bps: '100', organizations: mm2 };
    const first = await get('staff', SUMMARY, q);
    const hits = sealed.hits;
    const again = await get('staff', SUMMARY, q);
    expect(sealed.hits).to.be.above(hits);
    expect(again.text).to.equal(first.text);
    // The text is what JSON.stringify writes of the rows.
    expect(again.text).to.equal(JSON.stringify(again.body));
    const before = again.body.find((r) => r.pair === pairC)!;
    expect(before).to.include({ source: 'organization', bid_100bps: null });

    // A report pushed later into that day (no wallet on that pair: the reported row shows it).
    const pushed = await call('POST', '/v2/organizations/reported-metrics/', { token: tokens.maker2, json: [report(mm2, assetC, w.ex, pairC, 'depth/bid_100bps', 55)] });
    expect(pushed.status, pushed.text).to.equal(202);
    const after = await waitFor('the pushed depth in the summary', async () => {
      const r = await get('staff', SUMMARY, q);
      const row = r.body.find((x) => x.pair === pairC);
      return row?.bid_100bps === 55 && r;
    });
    expect(after.body.find((r) => r.pair === pairC)).to.include({ volume: 777, bid_100bps: 55 });
    // The rest of the answer is unchanged.
    expect(after.body.filter((r) => r.pair !== pairC)).to.deep.equal(again.body.filter((r) => r.pair !== pairC));
  });

  describe('visibility per role, on every endpoint', () => {
    const endpoints = [SUMMARY, DEPTH, VOLUME, RECON];
    const seen = async (who: keyof typeof users, path: string) => {
      const r = await get(who, path, { bps: '100' });
      expect(r.status, `${who} ${path}: ${r.text}`).to.equal(200);
      return [...new Set(r.body.map((x) => `${x.organization.slug} ${x.asset}`))].sort();
    };
    // What each role sees of the four series (organization and asset), per endpoint.
    const all: Record<string, string[]> = {
      [SUMMARY]: [`${w.mm} ${w.asset}`, `${mm2} ${assetC}`, `${mm2} ${w.asset}`],
      [DEPTH]: [`${w.mm} ${w.asset}`, `${mm2} ${w.asset}`],
      [VOLUME]: [`${w.mm} ${w.asset}`, `${mm2} ${assetC}`],
      [RECON]: [`${w.mm} ${w.asset}`, `${mm2} ${w.asset}`],
    };
    const only = (path: string, keep: (k: string) => boolean) => all[path]!.filter(keep).sort();

    for (const path of endpoints) {
      it(`${path}: staff see every market maker's values`, async () => {
        const mine = (await seen('staff', path)).filter((k) => k.startsWith(w.mm) || k.startsWith(mm2));
        expect(mine).to.deep.equal([...all[path]!].sort());
      });
      it(`${path}: a market maker sees only its own organization's values`, async () => {
        expect(await seen('maker', path)).to.deep.equal(only(path, (k) => k.startsWith(`${w.mm} `)));
        expect(await seen('maker2', path)).to.deep.equal(only(path, (k) => k.startsWith(`${mm2} `)));
      });
      it(`${path}: a project owner sees every market maker's values on its assets, nothing on others`, async () => {
        expect(await seen('owner', path)).to.deep.equal(only(path, (k) => k.endsWith(` ${w.asset}`)));
        expect(await seen('owner2', path)).to.deep.equal(only(path, (k) => k.endsWith(` ${assetC}`)));
      });
      it(`${path}: a user of no organization sees nothing`, async () => {
        expect(await seen('loner', path)).to.deep.equal([]);
      });
    }

    it('organizations: narrows to a market maker or to a project of the caller; one the caller may not name reads like an unknown one', async () => {
      expect(await seenWith('owner', { organizations: mm2 })).to.deep.equal([`${mm2} ${w.asset}`]);
      expect(await seenWith('staff', { organizations: project2 })).to.deep.equal([`${mm2} ${assetC}`]);
      const other = await get('maker', SUMMARY, { organizations: mm2 });
      const unknown = await get('maker', SUMMARY, { organizations: 'no-such-org' });
      expect(other.status).to.equal(400);
      expect(other.body).to.deep.equal({ organizations: [`"${mm2}" is not one of your organizations.`] });
      expect(unknown.body).to.deep.equal({ organizations: ['"no-such-org" is not one of your organizations.'] });
      // An asset of another project: the same answer as the market endpoints give.
      const asset = await get('maker', SUMMARY, { assets: assetC });
      expect(asset.status).to.equal(400);
      expect(asset.body).to.have.property('assets');
    });

    async function seenWith(who: keyof typeof users, q: Record<string, string>) {
      const r = await get(who, SUMMARY, { bps: '100', ...q });
      expect(r.status, r.text).to.equal(200);
      return [...new Set(r.body.map((x) => `${x.organization.slug} ${x.asset}`))].sort();
    }
  });
});
