// The form a snapshot's metrics cross threads in (processors/orderbook/packed.ts): read
// back, they are the metrics computed, missing values included.
import { expect } from 'chai';
import { bookMetrics, type BookMetrics } from '../../processors/metrics/book.ts';
import { bookPacking } from '../../processors/orderbook/packed.ts';
import type { Level } from '../../schemas/index.ts';

const bids: Level[] = [[99, 1], [100, 2], [98, 0], [97.5, 10]];
const asks: Level[] = [[101, 3], [102, 1], [110, 100]];

/** Plain copies: a read result shares its arrays with the next read. */
const plain = (m: BookMetrics) => JSON.parse(JSON.stringify(m)) as BookMetrics;

describe('book metrics packed for another thread', () => {
  const packing = bookPacking();

  it('reads back what was written, at any place of the array', () => {
    for (const rate of [1, 0.5]) {
      const m = bookMetrics(bids, asks, rate) as BookMetrics;
      const out = new Float64Array(packing.width * 3);
      packing.write(m, out, packing.width * 2);
      expect(plain(packing.read(out, packing.width * 2))).to.deep.equal(plain(m));
    }
  });

  it('keeps the missing values missing: no USD rate, no tick, sizes the book cannot fill', () => {
    const m = bookMetrics([[100, 1]], [[101, 1]], null) as BookMetrics;
    expect(m.tick).to.equal(null);
    expect(m.bidDepth).to.equal(null);
    const out = new Float64Array(packing.width);
    packing.write(m, out, 0);
    const back = packing.read(out, 0);
    expect(back.tick).to.equal(null);
    expect(back.bidDepth).to.equal(null);
    expect(back.askDepth).to.equal(null);
    expect(back.slippageBuy.every((x) => x === null)).to.equal(true);
    expect(plain(back)).to.deep.equal(plain(m));
  });

  it('a read lasts until the next one (the minute adds it before)', () => {
    const a = bookMetrics(bids, asks, 1) as BookMetrics;
    const b = bookMetrics([[50, 1]], [[51, 1]], 1) as BookMetrics;
    const out = new Float64Array(packing.width * 2);
    packing.write(a, out, 0);
    packing.write(b, out, packing.width);
    const first = plain(packing.read(out, 0));
    const second = plain(packing.read(out, packing.width));
    expect(first).to.deep.equal(plain(a));
    expect(second).to.deep.equal(plain(b));
  });
});
