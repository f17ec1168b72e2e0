// The demo's RFQ, made once (when acme has none): acme asks mm-one and mm-two for terms on
// ACME at binance and okx; it is open for a week, and each market maker has proposed —
// mm-one a hybrid offer meeting both requirements, mm-two a cheaper call-option offer with a
// weaker depth KPI and no spread KPI — so the comparison view (README) shows the cost, the
// option value, the requirements met and each one's measured track record side by side.
// Written as the versions the endpoints would write, with the service as author.
import type { ApiDeps } from '../../api/deps.ts';
import { AgreementStore } from '../../domain/agreements/store.ts';
import { newProposal, newRfq, nextRfq, proposalRecord, rfqRecord, type ProposalTerms, type RfqTerms } from '../../domain/rfq/rfq.ts';
import { startingUsdPrice } from '../../ingest/synthetic/market.ts';
import { DAY_MS } from '../../lib/time.ts';

export async function seedDemoRfq(deps: Pick<ApiDeps, 'ch' | 'ids' | 'now'>): Promise<number> {
  const store = new AgreementStore(deps.ch);
  if ((await store.latest('rfq')).some((r) => r.organization === 'acme')) return 0;
  const now = deps.now();
  const price = startingUsdPrice('ACME');
  const round = (x: number) => Number(x.toPrecision(4));
  const terms: RfqTerms = {
    asset: 'ACME',
    title: 'ACME market making, binance and okx',
    description: 'Two spot venues for 180 days; tokens lent against call options, a retainer possible.',
    models: ['loan_call_option', 'hybrid'],
    exchanges: ['binance', 'okx'],
    pairs: ['ACME/USDT'],
    markets: [
      { exchange: 'binance', pair: 'ACME/USDT' },
      { exchange: 'okx', pair: 'ACME/USDT' },
    ],
    loan_budget: { quantity: 2_000_000, quote_amount: 500_000 },
    term_days: 180,
    requirements: [
      { metric: 'depth/bid_10bps', exchange: null, pair: null, threshold: 1_000, direction: 'above', market_hours: null },
      { metric: 'spread/spread_bps', exchange: 'binance', pair: null, threshold: 20, direction: 'below', market_hours: null },
    ],
    invited: ['mm-one', 'mm-two'],
    sealed: false,
    deadline: now + 7 * DAY_MS,
  };
  const draft = newRfq(await deps.ids.next('rfqs', await store.maxId('rfq')), 'acme', terms, now, 0);
  const open = nextRfq(draft, 'open', now, 0);
  const one: ProposalTerms = {
    model: 'hybrid',
    loan: {
      quantity: 1_500_000,
      quote_amount: 250_000,
      tranches: [
        { quantity: 1_000_000, strike_basis: 'fixed', strike_price: round(price * 1.1), premium_pct: null, expires_after_days: 180 },
        { quantity: 500_000, strike_basis: 'twap_premium', strike_price: null, premium_pct: 25, expires_after_days: 365 },
      ],
    },
    retainer_fee_usd_month: 12_000,
    interest_rate_pct: 0,
    kpis: [
      { metric: 'depth/bid_10bps', exchange: null, pair: null, threshold: 1_500, direction: 'above', market_hours: null },
      { metric: 'spread/spread_bps', exchange: null, pair: null, threshold: 15, direction: 'below', market_hours: null },
    ],
    exchanges: ['binance', 'okx'],
    notes: 'Both venues around the clock; retainer covers reporting.',
    valid_until: now + 14 * DAY_MS,
  };
  const two: ProposalTerms = {
    model: 'loan_call_option',
    loan: { quantity: 2_000_000, quote_amount: 0, tranches: [{ quantity: 2_000_000, strike_basis: 'fixed', strike_price: round(price * 0.9), premium_pct: null, expires_after_days: 180 }] },
    retainer_fee_usd_month: 0,
    interest_rate_pct: 1,
    kpis: [{ metric: 'depth/bid_10bps', exchange: 'binance', pair: null, threshold: 500, direction: 'above', market_hours: null }],
    exchanges: ['binance'],
    notes: 'binance only; no retainer.',
    valid_until: now + 14 * DAY_MS,
  };
  const p1 = newProposal(await deps.ids.next('proposals', await store.maxId('proposal')), open, 'mm-one', one, now, 0);
  const p2 = newProposal(await deps.ids.next('proposals', await store.maxId('proposal')), open, 'mm-two', two, now, 0);
  const change = { at: now, by: 0 };
  await store.write([rfqRecord(draft, change), rfqRecord(open, change), proposalRecord(p1, change), proposalRecord(p2, change)]);
  return 1;
}
