// The market-maker answers' row order (domain/market-makers/readings.ts, inAnswerOrder):
// market maker, asset, exchange, pair as text compares, then bucket; rows of one bucket
// kept as they came; a pair read twice (two objects) ordered as one.
import { expect } from 'chai';
import { inAnswerOrder } from '../../domain/market-makers/readings.ts';
import type { Pair } from '../../domain/reference/repository.ts';
import { rng } from '../../ingest/synthetic/market.ts';

interface Row {
  maker: string;
  pair: Pair;
  b: number;
  seq: number;
}

describe('market-maker answer order', () => {
  it('orders rows by market maker, asset, exchange, pair and bucket, as a sort of the whole would', () => {
    const r = rng(5);
    const pairs: Pair[] = [];
    for (const asset of ['ZED', 'acme', 'Acme', 'B2']) for (const exchange of ['kraken', 'binance']) pairs.push({ exchange, pair: `${asset}/USDT`, asset, market_type: 'spot' });
    // The same pair as another object, as a second read gives it.
    pairs.push({ ...pairs[3]! });
    const makers = ['mm-b', 'mm-a', 'MM-c'];
    const rows: Row[] = [];
    for (let seq = 0; seq < 3000; seq++) {
      rows.push({ maker: makers[Math.floor(r() * makers.length)]!, pair: pairs[Math.floor(r() * pairs.length)]!, b: 1_800_000_000 + 300 * Math.floor(r() * 40), seq });
    }
    const want = [...rows].sort(
      (x, y) =>
        x.maker.localeCompare(y.maker) ||
        x.pair.asset.localeCompare(y.pair.asset) ||
        x.pair.exchange.localeCompare(y.pair.exchange) ||
        x.pair.pair.localeCompare(y.pair.pair) ||
        x.b - y.b ||
        x.seq - y.seq,
    );
    const got = inAnswerOrder(rows);
    expect(got.map((x) => x.seq)).to.deep.equal(want.map((x) => x.seq));
    expect(rows.map((x) => x.seq)).to.deep.equal(rows.map((_, i) => i), 'the rows given are left as they were');
  });
});
