// Trusted metrics from a market maker's own orders and fills (addendum section 4), through
// the real processors: depth at every level of L against the public mid of the same
// minute, whichever of the two is written first; fills counted once per id; wallets
// checked against the fixture; a minute whose public book never came stays unjoined.
import { expect } from 'chai';
import { topicName, dlqTopicName } from '../../lib/kafka.ts';
import { dlqRecords, seed, waitFor, world } from '../support/helpers.ts';
import { L, type Lvl } from '../support/market-reference.ts';
import { testStack } from '../support/stack.ts';

const MINUTE = 60_000;

/** Mean over snapshots of the USD value of the levels within L of `mid`, per level of L. */
function expectedDepth(snaps: { bids: Lvl[]; asks: Lvl[] }[], mid: number) {
  const side = (pick: (s: { bids: Lvl[]; asks: Lvl[] }) => Lvl[], within: (p: number, l: number) => boolean) =>
    L.map((l) => snaps.reduce((sum, s) => sum + pick(s).filter(([p]) => within(p, l)).reduce((a, [p, q]) => a + p * q, 0), 0) / snaps.length);
  return {
    bid: side((s) => s.bids, (p, l) => p >= mid * (1 - l / 1e4)),
    ask: side((s) => s.asks, (p, l) => p <= mid * (1 + l / 1e4)),
  };
}

const close = (actual: number[], expected: number[]) => {
  expect(actual).to.have.length(expected.length);
  actual.forEach((v, i) => expect(v, `level ${L[i]}`).to.be.closeTo(expected[i]!, 1e-6 * Math.max(1, expected[i]!)));
};

describe('trusted metrics (mm.orders, mm.fills)', function () {
  this.timeout(90_000);
  const w = world();
  const pair = `${w.asset}/USDT`;
  const wallet = w.fixture.wallets![0]!.id;
  // An hour ago, so each minute is written once its series goes quiet.
  const base = Math.floor((Date.now() - 3_600_000) / MINUTE) * MINUTE;
  const [m1, m2, m3] = [base, base + MINUTE, base + 2 * MINUTE];
  const own = [
    { bids: [[99.9, 2], [99, 5], [90, 1]] as Lvl[], asks: [[100.1, 2], [102, 3]] as Lvl[] },
    { bids: [[99.95, 4], [99, 1]] as Lvl[], asks: [[100.2, 1], [104, 2]] as Lvl[] },
  ];
  const ordersMsg = (ts: number, s: (typeof own)[number], extra: object = {}) => ({ organization: w.mm, wallet_id: wallet, exchange: w.ex, pair, ts, ...s, ...extra });
  const book = (ts: number) => ({ exchange: w.ex, pair, ts, bids: [[99, 10]], asks: [[101, 10]] });

  async function send(topic: 'mm.orders' | 'mm.fills' | 'md.orderbook', values: object[], key = `${w.ex}:${pair}`) {
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: topicName(config, topic), messages: values.map((v) => ({ key, value: JSON.stringify(v) })) });
    await producer.disconnect();
  }

  const q = <T>(sql: string, params: Record<string, unknown> = {}) =>
    testStack().service.deps.ch.query<T>(sql, { ex: w.ex, pair, wallet, ...params });

  before(async () => {
    await seed(w.fixture);
  });

  it('joins own orders with the public mid of the same minute, whichever is written first, and rolls them up', async () => {
    // m1: the market maker's minute first, then the public book's; m2: the other way round.
    await send('mm.orders', [ordersMsg(m1 + 1_000, own[0]!), ordersMsg(m1 + 30_000, own[1]!)]);
    await waitFor('the own-order minute', async () => (await q<{ n: number }>(`SELECT count() AS n FROM mm_order_minutes FINAL WHERE exchange = {ex:String} AND wallet_id = {wallet:UInt64}`))[0]!.n >= 1);
    await send('md.orderbook', [book(m1 + 2_000), book(m2 + 2_000)]);
    await waitFor('the public minute m2', async () => (await q<{ n: number }>(`SELECT count() AS n FROM book_minutes FINAL WHERE exchange = {ex:String} AND minute = toDateTime({m:UInt32}, 'UTC')`, { m: m2 / 1000 }))[0]!.n === 1);
    await send('mm.orders', [ordersMsg(m2 + 5_000, own[0]!)]);

    const rows = await waitFor('trusted depth of both minutes', async () => {
      const r = await q<{ minute: number; mid: number; bid_depth: number[]; ask_depth: number[] }>(
        `SELECT toUnixTimestamp(minute) * 1000 AS minute, mid, bid_depth, ask_depth FROM trusted_depth_minutes FINAL
         WHERE exchange = {ex:String} AND pair = {pair:String} AND wallet_id = {wallet:UInt64} ORDER BY minute`,
      );
      return r.length === 2 && r;
    });
    expect(rows.map((r) => Number(r.minute))).to.deep.equal([m1, m2]);
    const e1 = expectedDepth(own, 100);
    const e2 = expectedDepth([own[0]!], 100);
    expect(rows[0]!.mid).to.equal(100);
    close(rows[0]!.bid_depth, e1.bid);
    close(rows[0]!.ask_depth, e1.ask);
    close(rows[1]!.bid_depth, e2.bid);
    close(rows[1]!.ask_depth, e2.ask);
    // Within 0 bps of the mid nothing rests; within 500 bps all but the 90 bid.
    expect(rows[0]!.bid_depth[0]).to.equal(0);

    const hour = await waitFor('the hour rollup', async () => {
      const r = await q<{ minutes: number; bid_depth_sum: number[] }>(
        `SELECT minutes, bid_depth_sum FROM trusted_depth_hours FINAL WHERE exchange = {ex:String} AND pair = {pair:String} AND wallet_id = {wallet:UInt64}`,
      );
      return r.length > 0 && Number(r.reduce((n, x) => n + Number(x.minutes), 0)) === 2 && r;
    });
    const sums = hour.reduce((acc, r) => acc.map((v, i) => v + r.bid_depth_sum[i]!), L.map(() => 0));
    close(sums, e1.bid.map((v, i) => v + e2.bid[i]!));
  });

  it('keeps a minute whose public book never came, without trusted depth', async () => {
    await send('mm.orders', [ordersMsg(m3 + 1_000, own[0]!)]);
    await waitFor('the own-order minute m3', async () => (await q<{ n: number }>(`SELECT count() AS n FROM mm_order_minutes FINAL WHERE exchange = {ex:String} AND minute = toDateTime({m:UInt32}, 'UTC')`, { m: m3 / 1000 }))[0]!.n === 1);
    const trusted = await q<{ n: number }>(`SELECT count() AS n FROM trusted_depth_minutes FINAL WHERE exchange = {ex:String} AND minute = toDateTime({m:UInt32}, 'UTC')`, { m: m3 / 1000 });
    expect(Number(trusted[0]!.n)).to.equal(0);
  });

  it('counts each fill id once, in USD, per wallet and minute', async () => {
    const fill = (id: string, ts: number, price: number, amount: number) => ({ organization: w.mm, wallet_id: wallet, exchange: w.ex, pair, ts, price, amount, side: 'buy', id });
    await send('mm.fills', [fill('a', m1 + 1_000, 100, 2), fill('b', m1 + 2_000, 101, 1), fill('a', m1 + 1_000, 100, 2)]);
    const rows = await waitFor('the fill minute', async () => {
      const r = await q<{ fills: number; volume_usd: number }>(
        `SELECT fills, volume_usd FROM trusted_volume_minutes FINAL WHERE exchange = {ex:String} AND wallet_id = {wallet:UInt64}`,
      );
      return r.length > 0 && r;
    });
    expect(rows).to.have.length(1);
    expect(Number(rows[0]!.fills)).to.equal(2);
    expect(rows[0]!.volume_usd).to.be.closeTo(301, 1e-9);
    const day = await waitFor('the day rollup', async () => {
      const r = await q<{ volume_usd: number }>(`SELECT volume_usd FROM trusted_volume_days FINAL WHERE exchange = {ex:String} AND wallet_id = {wallet:UInt64}`);
      return r.length > 0 && r;
    });
    expect(day.reduce((a, r) => a + r.volume_usd, 0)).to.be.closeTo(301, 1e-9);
  });

  it('dead-letters an unknown wallet, a wallet of another organization and one on another exchange', async () => {
    const { config } = testStack();
    await send('mm.orders', [ordersMsg(m1 + 3_000, own[0]!, { wallet_id: 987_654_321 })], `unknown-${w.tag}`);
    await send('mm.orders', [ordersMsg(m1 + 3_000, own[0]!, { organization: w.project })], `other-org-${w.tag}`);
    await send('mm.fills', [{ organization: w.mm, wallet_id: wallet, exchange: w.ex2, pair: `${w.asset}/USD`, ts: m1, price: 1, amount: 1, side: 'sell', id: 'x' }], `other-ex-${w.tag}`);
    const mine = <R extends { key: string | null }>(records: R[]) => records.filter((r) => r.key?.endsWith(`-${w.tag}`));
    const orders = mine(await dlqRecords(dlqTopicName(config, 'mm.orders'), (all) => mine(all).length >= 2));
    expect(orders.find((r) => r.key === `unknown-${w.tag}`)!.reason).to.equal('unknown wallet: 987654321');
    expect(orders.find((r) => r.key === `other-org-${w.tag}`)!.reason).to.equal(`wallet ${wallet} is not of organization ${w.project}`);
    const fills = mine(await dlqRecords(dlqTopicName(config, 'mm.fills'), (all) => mine(all).length >= 1));
    expect(fills[0]!.reason).to.equal(`wallet ${wallet} is on ${w.ex}, not ${w.ex2}`);
  });
});
