// USD quotes and quote rates (addendum section 1; domain/market/prices.ts).
import { expect } from 'chai';
import { isUsdQuoted, QuoteRates, splitPair, USD_QUOTES } from '../../domain/market/prices.ts';

describe('prices (domain/market/prices.ts)', () => {
  it('counts USD and the listed stablecoins as 1 USD', () => {
    expect([...USD_QUOTES].sort()).to.deep.equal(['DAI', 'FDUSD', 'USD', 'USDC', 'USDT']);
    expect(isUsdQuoted('ACME/USDC')).to.equal(true);
    expect(isUsdQuoted('ACME/BTC')).to.equal(false);
    expect(isUsdQuoted('ACME')).to.equal(false);
    expect(splitPair('ACME/BTC')).to.deep.equal({ base: 'ACME', quote: 'BTC' });
  });

  it('converts another quote with the latest mid of <QUOTE>/USDT or <QUOTE>/USD at or before the time, null before one', () => {
    const rates = new QuoteRates();
    expect(rates.rate('ACME/USDT', 0)).to.equal(1);
    expect(rates.rate('ACME/BTC', 0)).to.equal(null);
    rates.observe('BTC/USDT', 60_000, 1_000, 'a');
    rates.observe('BTC/USDT', 60_100, 3_000, 'a');
    rates.observe('BTC/USD', 61_000, 2_000, 'b');
    expect(rates.rate('ACME/BTC', 999)).to.equal(null);
    expect(rates.rate('ACME/BTC', 1_000)).to.equal(60_000);
    expect(rates.rate('ACME/BTC', 2_500)).to.equal(61_000);
    expect(rates.rate('ACME/BTC', 3_000)).to.equal(60_100);
    // Seen late (another partition read behind): still in its place in time.
    rates.observe('BTC/USDT', 59_000, 1_500, 'a');
    expect(rates.rate('ACME/BTC', 1_700)).to.equal(59_000);
    expect(rates.rate('ACME/BTC', 3_500)).to.equal(60_100);
    // A pair quoted in another currency does not make its base convertible.
    rates.observe('ETH/BTC', 0.05, 1_000, 'a');
    expect(rates.rate('ACME/ETH', 2_000)).to.equal(null);
  });

  it('keeps only the sources of the known pairs\' quote currencies, and says how far they were seen', () => {
    const rates = new QuoteRates();
    rates.learnPairs(['a:ACME/BTC', 'a:BTC/USDT', 'a:ETH/USDT', 'b:ACME/EUR', 'a:ACME/USDC']);
    expect(rates.observe('ETH/USDT', 2_000, 1_000, 'a')).to.equal(false);
    expect(rates.through('ACME/BTC')).to.equal(-Infinity);
    expect(rates.observe('BTC/USDT', 60_000, 1_000, 'a')).to.equal(true);
    expect(rates.through('ACME/BTC')).to.equal(1_000);
    // Nothing to wait for: a USD quote, a currency no known pair converts.
    expect(rates.through('ACME/USDC')).to.equal(Infinity);
    expect(rates.through('ACME/EUR')).to.equal(Infinity);
  });

  it('keeps a source\'s mids for its keeping time behind the newest, and the rate at its start', () => {
    const rates = new QuoteRates(10_000);
    for (let t = 0; t <= 40_000; t += 10) rates.observe('BTC/USDT', t, t, 'a');
    expect(rates.rate('ACME/BTC', 40_000)).to.equal(40_000);
    expect(rates.rate('ACME/BTC', 30_005)).to.equal(30_000);
    // Older mids were let go, the last of them kept: the rate there is the oldest kept.
    expect(rates.rate('ACME/BTC', 0)).to.equal(null);
  });

  it('saves what it observes, not what it loads', () => {
    const rates = new QuoteRates().saving();
    rates.load([{ exchange: 'a', pair: 'BTC/USDT', ts: 1_000, mid: 60_000 }]);
    rates.observe('BTC/USD', 61_000, 2_000, 'b');
    expect(rates.takeUnsaved()).to.deep.equal([{ exchange: 'b', pair: 'BTC/USD', ts: 2_000, mid: 61_000 }]);
    expect(rates.takeUnsaved()).to.deep.equal([]);
    expect(rates.rate('ACME/BTC', 1_500)).to.equal(60_000);
  });
});
