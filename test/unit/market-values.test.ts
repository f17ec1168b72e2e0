// The market's values from partials (domain/market/values.ts), as every reader takes them.
import { expect } from 'chai';
import type { BookPartial, TradePartial } from '../../domain/market/families/index.ts';
import { mean, meanPacked, priceChange, tick, twap, volume, vwap } from '../../domain/market/values.ts';

const key = { exchange: 'x', pair: 'A/USDT', b: 0 };
const trades = (over: Partial<TradePartial> = {}): TradePartial => ({ ...key, trades: 4, amount: 2, notional: 201, volume_usd: 201, usd_trades: 4, ...over });
const book = (over: Partial<BookPartial> = {}): BookPartial => ({
  ...key,
  minutes: 3,
  samples: 30,
  mid_sum: 300,
  first: [1_000, 80],
  last: [2_000, 100],
  tick_min: 0.01,
  depth_minutes: 3,
  bid_depth_sum: [],
  ask_depth_sum: [],
  bid_count_sum: [],
  ask_count_sum: [],
  ...over,
});

describe('market values (domain/market/values.ts)', () => {
  it('volume: the USD sum; 0 for a window without a trade row or without trades; null when no trade had a USD rate', () => {
    expect(volume(trades())).to.equal(201);
    expect(volume(undefined)).to.equal(0);
    expect(volume(trades({ trades: 0, usd_trades: 0, volume_usd: 0 }))).to.equal(0);
    expect(volume(trades({ usd_trades: 0, volume_usd: 0 }))).to.equal(null);
    // Some trades priced: the priced part.
    expect(volume(trades({ usd_trades: 1, volume_usd: 50 }))).to.equal(50);
  });

  it('TWAP the mean minute mid, VWAP notional over amount, both null without data', () => {
    expect(twap(book())).to.equal(100);
    expect(twap(undefined)).to.equal(null);
    expect(twap(book({ minutes: 0, mid_sum: 0 }))).to.equal(null);
    expect(vwap(trades())).to.equal(100.5);
    expect(vwap(trades({ amount: 0 }))).to.equal(null);
    expect(vwap(undefined)).to.equal(null);
  });

  it('price change from the first to the last mid, in percent', () => {
    expect(priceChange(book())).to.equal(25);
    expect(priceChange(book({ first: [1_000, 0] }))).to.equal(null);
    expect(priceChange(undefined)).to.equal(null);
  });

  it('tick size in bps of the mean mid, ok from 10 snapshots', () => {
    expect(tick(book())).to.deep.equal({ tick_bps: 1, tick_bps_status: 'ok', tick_bps_samples: 30 });
    expect(tick(book({ samples: 9 })).tick_bps_status).to.equal('insufficient_data');
    expect(tick(book({ tick_min: null })).tick_bps).to.equal(null);
    expect(tick(undefined)).to.deep.equal({ tick_bps: null, tick_bps_status: 'insufficient_data', tick_bps_samples: 0 });
  });

  it('mean: null over no count', () => {
    expect(mean(6, 3)).to.equal(2);
    expect(mean(6, 0)).to.equal(null);
    expect(mean(undefined, 3)).to.equal(null);
    expect(meanPacked(6, 3)).to.equal(2);
    expect(meanPacked(6, 0)).to.be.NaN;
    expect(meanPacked(null, 3)).to.be.NaN;
  });
});
