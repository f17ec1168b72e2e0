// USD quotes and quote rates (addendum section 1; domain/market/prices.ts).
import { expect } from 'chai';
import { isUsdQuoted, QuoteRates, splitPair, usdPairsOf, USD_QUOTES } from '../../domain/market/prices.ts';
import type { Pair } from '../../domain/reference/repository.ts';

describe('prices (domain/market/prices.ts)', () => {
  it('counts USD and the listed stablecoins as 1 USD', () => {
    expect([...USD_QUOTES].sort()).to.deep.equal(['DAI', 'FDUSD', 'USD', 'USDC', 'USDT']);
    expect(isUsdQuoted('ACME/USDC')).to.equal(true);
    expect(isUsdQuoted('ACME/BTC')).to.equal(false);
    expect(isUsdQuoted('ACME')).to.equal(false);
    expect(splitPair('ACME/BTC')).to.deep.equal({ base: 'ACME', quote: 'BTC' });
  });

  it("converts another quote with the latest mid of <QUOTE>/USDT or <QUOTE>/USD, null before one is seen", () => {
    const rates = new QuoteRates();
    expect(rates.rate('ACME/USDT')).to.equal(1);
    expect(rates.rate('ACME/BTC')).to.equal(null);
    rates.observe('BTC/USDT', 60_000);
    expect(rates.rate('ACME/BTC')).to.equal(60_000);
    rates.observe('BTC/USD', 61_000);
    expect(rates.rate('ACME/BTC')).to.equal(61_000);
    // A pair quoted in another currency does not make its base convertible.
    rates.observe('ETH/BTC', 0.05);
    expect(rates.rate('ACME/ETH')).to.equal(null);
  });

  it("prices an asset from its USD-quoted pairs only", () => {
    const pairs: Pair[] = [
      { exchange: 'a', pair: 'ACME/USDT', asset: 'ACME', market_type: 'spot' },
      { exchange: 'b', pair: 'ACME/BTC', asset: 'ACME', market_type: 'spot' },
      { exchange: 'b', pair: 'ACME/USD', asset: 'ACME', market_type: 'spot' },
      { exchange: 'a', pair: 'OTHER/USDT', asset: 'OTHER', market_type: 'spot' },
    ];
    expect(usdPairsOf('ACME', pairs).map((p) => `${p.exchange}:${p.pair}`)).to.deep.equal(['a:ACME/USDT', 'b:ACME/USD']);
  });
});
