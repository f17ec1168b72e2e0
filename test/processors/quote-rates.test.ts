// A pair quoted in another currency (addendum section 1): its books and trades are converted
// to USD with the latest mid of <QUOTE>/USDT at or before their own time, even when they are
// read before those mids (here they are produced first), as an independent computation
// over the messages in time order does it.
import { expect } from 'chai';
import { assetTwap } from '../../domain/market/prices.ts';
import { topicName } from '../../lib/kafka.ts';
import { call, login, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

type Level = [number, number];
interface Book {
  exchange: string;
  pair: string;
  ts: number;
  bids: Level[];
  asks: Level[];
}
interface Trade {
  exchange: string;
  pair: string;
  ts: number;
  price: number;
  amount: number;
  side: 'buy';
  id: string;
}

describe('quote currencies converted by event time (md.orderbook, md.trades), and the asset priced over all its pairs', function () {
  this.timeout(120_000);
  const w = world();
  const quote = w.other;
  const pair = `${w.asset}/${quote}`;
  const source = `${quote}/USDT`;
  w.fixture.pairs!.push({ exchange: w.ex, pair, asset: w.asset, market_type: 'spot' });
  const from = Date.UTC(2026, 3, 1, 10, 0);
  const to = from + 10 * 60_000;

  // The quote currency's mid moves at every snapshot; the pair's books and trades fall between them.
  const sourceBooks: Book[] = [];
  for (let t = from, k = 0; t < to; t += 7_000, k++) {
    const m = 2 + 0.013 * Math.sin(k) + k * 1e-3;
    sourceBooks.push({ exchange: w.ex, pair: source, ts: t, bids: [[m * 0.9999, 10]], asks: [[m * 1.0001, 10]] });
  }
  // One past the window: the last of the pair's messages need not wait for the source to go quiet.
  sourceBooks.push({ exchange: w.ex, pair: source, ts: to, bids: [[1.9, 10]], asks: [[1.91, 10]] });
  const books: Book[] = [];
  for (let t = from + 3_000, k = 0; t < to; t += 5_000, k++) {
    const m = 50 + (k % 7) * 0.01;
    books.push({
      exchange: w.ex,
      pair,
      ts: t,
      bids: [0, 1, 2].map((i): Level => [m * (1 - 0.001 * (i + 1)), 1 + i + (k % 3)]),
      asks: [0, 1, 2].map((i): Level => [m * (1 + 0.001 * (i + 1)), 2 + i]),
    });
  }
  const trades: Trade[] = [];
  for (let t = from + 4_000, k = 0; t < to; t += 11_000, k++) trades.push({ exchange: w.ex, pair, ts: t, price: 50 + k * 0.01, amount: 1 + (k % 5), side: 'buy', id: `t${k}` });

  /** The rate at `ts`: the latest source mid at or before it. */
  function rate(ts: number): number {
    let r: number | undefined;
    for (const b of sourceBooks) if (b.ts <= ts) r = (b.bids[0]![0] + b.asks[0]![0]) / 2;
    return r!;
  }

  it('converts with the quote mid of each message’s own time, though the mids were read after them', async () => {
    await seed(w.fixture);
    const token = await login(w.users.staff.email, w.password);
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    const key = (x: { exchange: string; pair: string }) => `${x.exchange}:${x.pair}`;
    await producer.send({ topic: topicName(config, 'md.orderbook'), messages: books.map((m) => ({ key: key(m), value: JSON.stringify(m) })) });
    await producer.send({ topic: topicName(config, 'md.trades'), messages: trades.map((m) => ({ key: key(m), value: JSON.stringify(m) })) });
    // Read first: the pair's messages wait for the mids of their time.
    await new Promise((r) => setTimeout(r, 1_500));
    await producer.send({ topic: topicName(config, 'md.orderbook'), messages: sourceBooks.map((m) => ({ key: key(m), value: JSON.stringify(m) })) });
    await producer.disconnect();

    // Independently: per minute, the mean over its books of the bid depth within 50 bps in
    // USD; over the window, the mean of the minutes; the volume, each trade at its rate.
    const minutes = new Map<number, number[]>();
    for (const b of books) {
      const mid = (b.bids[0]![0] + b.asks[0]![0]) / 2;
      const depth = b.bids.filter(([p]) => p >= mid * (1 - 50 / 1e4)).reduce((s, [p, a]) => s + p * a, 0) * rate(b.ts);
      const m = Math.floor(b.ts / 60_000);
      minutes.set(m, [...(minutes.get(m) ?? []), depth]);
    }
    const means = [...minutes.values()].map((d) => d.reduce((s, x) => s + x, 0) / d.length);
    const bidDepth = means.reduce((s, x) => s + x, 0) / means.length;
    const volume = trades.reduce((s, t) => s + t.price * t.amount * rate(t.ts), 0);

    const q = `assets=${w.asset}&bps=50&time_start=${new Date(from).toISOString()}&time_end=${new Date(to).toISOString()}`;
    // Until the books and the trades are all in: a trade minute may land after the books'.
    type Row = { pair: string; tick_bps_samples: number; volume: number | null; bid_50bps: number | null };
    let row: Row | undefined;
    await waitFor(
      'every book and trade of the pair in its minutes',
      async () => {
        const r = await call<Row[]>('GET', `/v2/metrics/summary/?${q}`, { token });
        expect(r.status, r.text).to.equal(200);
        row = r.body.find((p) => p.pair === pair);
        return row !== undefined && row.tick_bps_samples === books.length && Math.abs((row.volume ?? 0) - volume) <= volume * 1e-9;
      },
      60_000,
    ).catch(() => undefined);
    expect(row, 'the pair in the summary').to.not.equal(undefined);
    expect(row!.tick_bps_samples).to.equal(books.length);
    expect(row!.volume).to.be.closeTo(volume, volume * 1e-9);
    expect(row!.bid_50bps).to.be.closeTo(bidDepth, bidDepth * 1e-9);
    // The asset's price: the mean of its minute mids in USD over all its pairs (only this one
    // has books here), each minute's the mean over its books of mid x the rate of their time.
    const usdMids = new Map<number, number[]>();
    for (const b of books) {
      const m = Math.floor(b.ts / 60_000);
      usdMids.set(m, [...(usdMids.get(m) ?? []), ((b.bids[0]![0] + b.asks[0]![0]) / 2) * rate(b.ts)]);
    }
    const minuteMids = [...usdMids.values()].map((d) => d.reduce((s, x) => s + x, 0) / d.length);
    const twap = minuteMids.reduce((s, x) => s + x, 0) / minuteMids.length;
    const { service } = testStack();
    const price = await assetTwap(service.deps.ch, w.asset, w.fixture.pairs!, from, to, from);
    expect(price).to.be.closeTo(twap, twap * 1e-12);
    // The same from the day's rollup, once its hours are sealed.
    const day = Date.UTC(2026, 3, 1);
    await waitFor('the day rolled up', async () => {
      const p = await assetTwap(service.deps.ch, w.asset, w.fixture.pairs!, day, day + 86_400_000, await service.deps.rolledUp.through());
      return p !== null && Math.abs(p - twap) <= twap * 1e-12;
    });
    // Not the latest rate for all: the rate moved enough to tell.
    const latest = rate(to);
    expect(Math.abs(volume - trades.reduce((s, t) => s + t.price * t.amount * latest, 0))).to.be.above(volume * 1e-3);
  });
});
