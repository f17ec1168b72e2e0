// The demo's loans, made once (when acme has none): one `active` loan to mm-one with a fixed
// and a twap_premium tranche, whose KPI counts the demo's mm-one target, one to mm-two
// whose only tranche has expired, so it is `settlement_due` (README walks through both),
// and a `draft` to mm-two starting next week, to change in the web app.
// Written as the versions the actions and the keeper would write, with the service as author.
import type { ApiDeps } from '../../api/deps.ts';
import { applyAction, settlementDue } from '../../domain/loans/actions.ts';
import { AgreementStore } from '../../domain/agreements/store.ts';
import { draftLoan, loanRecord, type Loan, type LoanTerms } from '../../domain/loans/loan.ts';
import { startingUsdPrice } from '../../ingest/synthetic/market.ts';
import { DAY_MS } from '../../lib/time.ts';

export async function seedDemoLoans(deps: Pick<ApiDeps, 'ch' | 'ids' | 'now'>): Promise<number> {
  const store = new AgreementStore(deps.ch);
  if ((await store.latest('loan')).some((l) => l.organization === 'acme')) return 0;
  const now = deps.now();
  const day = Math.floor(now / DAY_MS) * DAY_MS;
  const price = startingUsdPrice('ACME');
  const round = (x: number) => Number(x.toPrecision(4));
  const base = { asset: 'ACME', quote_amount: 0, interest_rate_pct: 0, settlement_asset: 'USDT', collateral: null, exchanges: ['binance', 'okx'], pairs: ['ACME/USDT'] } as const;
  const active: LoanTerms = {
    ...base,
    exchanges: [...base.exchanges],
    pairs: [...base.pairs],
    market_maker: 'mm-one',
    model: 'hybrid',
    quantity: 1_000_000,
    quote_amount: 250_000,
    retainer_fee_usd_month: 15_000,
    interest_rate_pct: 2,
    start_date: day - DAY_MS,
    end_date: day + 365 * DAY_MS,
    tranches: [
      { id: 1, quantity: 600_000, disbursed_at: day - DAY_MS, strike_basis: 'fixed', strike_price: round(price * 0.8), premium_pct: null, expires_at: day + 180 * DAY_MS, settlement: null, settled_quantity: null },
      { id: 2, quantity: 400_000, disbursed_at: day - DAY_MS, strike_basis: 'twap_premium', strike_price: null, premium_pct: 25, expires_at: day + 365 * DAY_MS, settlement: null, settled_quantity: null },
    ],
  };
  const due: LoanTerms = {
    ...base,
    exchanges: [...base.exchanges],
    pairs: [...base.pairs],
    market_maker: 'mm-two',
    model: 'loan_call_option',
    quantity: 500_000,
    retainer_fee_usd_month: 0,
    collateral: { asset: 'USDT', amount: 100_000 },
    start_date: day - 90 * DAY_MS,
    end_date: day - DAY_MS,
    tranches: [{ id: 1, quantity: 500_000, disbursed_at: day - 90 * DAY_MS, strike_basis: 'fixed', strike_price: round(price * 1.2), premium_pct: null, expires_at: day - DAY_MS, settlement: null, settled_quantity: null }],
  };
  const planned: LoanTerms = {
    ...base,
    exchanges: ['binance'],
    pairs: [...base.pairs],
    market_maker: 'mm-two',
    model: 'retainer',
    quantity: 200_000,
    retainer_fee_usd_month: 8_000,
    start_date: day + 7 * DAY_MS,
    end_date: day + 97 * DAY_MS,
    tranches: [{ id: 1, quantity: 200_000, disbursed_at: day + 7 * DAY_MS, strike_basis: 'twap_premium', strike_price: null, premium_pct: 30, expires_at: day + 97 * DAY_MS, settlement: null, settled_quantity: null }],
  };
  const records = [];
  for (const terms of [active, due, planned]) {
    const id = await deps.ids.next('loans', await store.maxId('loan'));
    const versions: Loan[] = [draftLoan(id, 'acme', terms, now, 0)];
    if (terms === planned) {
      records.push(loanRecord(versions[0]!, { at: now, by: 0 }));
      continue;
    }
    const activated = applyAction(versions[0]!, 'activate', {}, { now, by: 0, startTwap: null });
    if (activated.error) throw new Error(`demo loan ${id}: ${JSON.stringify(activated.error)}`);
    versions.push(activated.loan);
    const expired = settlementDue(activated.loan, now);
    if (expired) versions.push(expired);
    records.push(...versions.map((v) => loanRecord(v, { at: now, by: 0 })));
  }
  await store.write(records);
  return 3;
}
