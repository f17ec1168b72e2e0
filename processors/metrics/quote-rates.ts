// USD value of a quote currency (addendum section 1): USD and the listed stablecoins count
// 1; another quote is converted with the latest mid of <QUOTE>/USDT or <QUOTE>/USD seen on
// any exchange; with none known, USD values are null.
export const USD_QUOTES = new Set(['USD', 'USDT', 'USDC', 'FDUSD', 'DAI']);

export function splitPair(pair: string): { base: string; quote: string } {
  const i = pair.indexOf('/');
  return i < 0 ? { base: pair, quote: '' } : { base: pair.slice(0, i), quote: pair.slice(i + 1) };
}

export class QuoteRates {
  private readonly mids = new Map<string, number>();

  /** Records a pair's mid: X/USDT and X/USD make X convertible. */
  observe(pair: string, mid: number): void {
    // As splitPair, without its object: this runs for every snapshot.
    const i = pair.indexOf('/');
    if (i < 0) return;
    const quote = pair.slice(i + 1);
    if (quote === 'USDT' || quote === 'USD') this.mids.set(pair.slice(0, i), mid);
  }

  /** USD per unit of the pair's quote currency, or null when unknown. */
  rate(pair: string): number | null {
    const i = pair.indexOf('/');
    const quote = i < 0 ? '' : pair.slice(i + 1);
    if (USD_QUOTES.has(quote)) return 1;
    return this.mids.get(quote) ?? null;
  }
}
