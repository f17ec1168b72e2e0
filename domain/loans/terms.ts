// A loan's terms as posted (POST, or PATCH over the draft's terms) checked against the
// reference data and each other (addendum section 7); their shapes were the contract's.
// Every invalid field is named; a tranche's errors sit at its index.
// The lender is the asset's owner: a caller lends only assets its projects own (staff any).
import { DateTime } from 'luxon';
import type { LoanModel, LoanTerms, StrikeBasis, Tranche } from './loan.ts';
import type { LoanAccess } from './visibility.ts';
import type { Organization, ReferenceLists } from '../reference/repository.ts';
import type { Checked, FieldErrors } from '../outcome.ts';

export const LOAN_MESSAGES = {
  asset: (symbol: string) => `"${symbol}" is not an asset your organization owns.`,
  organization: 'Must be the owner of the asset (the lender).',
  marketMaker: (slug: string) => `"${slug}" is not a market maker organization.`,
  // An exchange the market maker is to quote on: one with a pair of the asset (a request's too).
  exchange: (slug: string) => `"${slug}" is not an exchange with a pair of the asset.`,
  pair: (pair: string) => `"${pair}" is not a pair of the asset on any of the loan's exchanges.`,
  choice: (values: readonly string[]) => `Not a valid choice; expected one of: ${values.join(', ')}.`,
  dateTime: 'A valid ISO 8601 date-time with a time zone is required.',
  endAfterStart: 'Must be later than start_date.',
  retainerFee: 'Must be greater than 0 for the retainer and hybrid models.',
  trancheSum: (sum: number, quantity: number) => `The tranches' quantities add up to ${sum}, not the loan's quantity ${quantity}.`,
  strikePrice: 'A strike price greater than 0 is required for a fixed strike.',
  premium: 'A premium in percent (above -100) is required for a twap_premium strike.',
  expiry: 'Must be later than disbursed_at.',
} as const;

export interface LoanContext {
  access: LoanAccess;
  organizations: Map<string, Organization>;
  lists: ReferenceLists;
}

/**
 * A loan's terms as posted (POST: all that are required; PATCH: those that change); their
 * types, choices, bounds and lengths were checked by the contract (api/openapi.yaml,
 * `LoanTermsInput`, whose type must fit this one). Times are ISO 8601 with an offset.
 */
export interface LoanTermsInput {
  organization?: string;
  market_maker?: string;
  asset?: string;
  model?: LoanModel;
  quantity?: number;
  quote_amount?: number;
  retainer_fee_usd_month?: number;
  interest_rate_pct?: number;
  settlement_asset?: string;
  collateral?: null | { asset: string; amount: number };
  exchanges?: string[];
  pairs?: string[];
  start_date?: string;
  end_date?: string;
  tranches?: { quantity: number; disbursed_at?: string; strike_basis: StrikeBasis; strike_price?: number | null; premium_pct?: number | null; expires_at: string }[];
}

const ms = (text: string) => DateTime.fromISO(text, { setZone: true }).toMillis();

/**
 * The terms, or the body's field errors, against the reference data and each other. `base`
 * holds a draft's terms that a PATCH leaves as they are; a POST gives every required field.
 */
export function loanTermsOf(given: LoanTermsInput, c: LoanContext, base?: LoanTerms & { organization: string }): Checked<LoanTerms & { organization: string }> {
  const x = (base ? { ...presentTerms(base), ...given } : given) as Required<Pick<LoanTermsInput, 'market_maker' | 'asset' | 'model' | 'quantity' | 'exchanges' | 'pairs' | 'start_date' | 'end_date' | 'tranches'>> & LoanTermsInput;
  const errors: FieldErrors = {};
  const fail = (f: string, m: string) => {
    errors[f] = [m];
  };
  const assetRow = c.lists.assets.find((a) => a.symbol === x.asset);
  if (!assetRow || !c.access.lendable.has(x.asset)) fail('asset', LOAN_MESSAGES.asset(x.asset));
  const organization = assetRow?.owner;
  if (x.organization !== undefined && organization !== undefined && x.organization !== organization) fail('organization', LOAN_MESSAGES.organization);
  if (c.organizations.get(x.market_maker)?.kind !== 'market_maker') fail('market_maker', LOAN_MESSAGES.marketMaker(x.market_maker));
  const retainer = x.retainer_fee_usd_month ?? 0;
  if ((x.model === 'retainer' || x.model === 'hybrid') && !(retainer > 0)) fail('retainer_fee_usd_month', LOAN_MESSAGES.retainerFee);

  const exchanges = [...new Set(x.exchanges)];
  const badExchanges = exchanges.filter((e) => !c.lists.pairs.some((q) => q.exchange === e && q.asset === x.asset));
  if (badExchanges.length > 0) errors.exchanges = badExchanges.map(LOAN_MESSAGES.exchange);
  const pairs = [...new Set(x.pairs)];
  const badPairs = pairs.filter((p) => !c.lists.pairs.some((q) => q.pair === p && q.asset === x.asset && exchanges.includes(q.exchange)));
  if (badPairs.length > 0) errors.pairs = badPairs.map(LOAN_MESSAGES.pair);

  const start = ms(x.start_date);
  const end = ms(x.end_date);
  if (end <= start) fail('end_date', LOAN_MESSAGES.endAfterStart);

  // Tranches as posted: ids 1..n in order; `disbursed_at` defaults to the start; settlement is the service's.
  const trancheErrors: FieldErrors[] = [];
  const tranches: Tranche[] = x.tranches.map((t, i) => {
    const e: FieldErrors = {};
    const disbursed = t.disbursed_at === undefined ? start : ms(t.disbursed_at);
    const expires = ms(t.expires_at);
    if (t.strike_basis === 'fixed' && !(t.strike_price && t.strike_price > 0)) e.strike_price = [LOAN_MESSAGES.strikePrice];
    if (t.strike_basis === 'twap_premium' && (t.premium_pct === undefined || t.premium_pct === null)) e.premium_pct = [LOAN_MESSAGES.premium];
    if (expires <= disbursed) e.expires_at = [LOAN_MESSAGES.expiry];
    trancheErrors.push(e);
    return {
      id: i + 1,
      quantity: t.quantity,
      disbursed_at: disbursed,
      strike_basis: t.strike_basis as StrikeBasis,
      strike_price: t.strike_basis === 'fixed' ? (t.strike_price ?? null) : null,
      premium_pct: t.strike_basis === 'twap_premium' ? (t.premium_pct ?? null) : null,
      expires_at: expires,
      settlement: null,
      settled_quantity: null,
    };
  });
  if (trancheErrors.some((e) => Object.keys(e).length > 0)) errors.tranches = trancheErrors;
  else {
    const sum = tranches.reduce((acc, t) => acc + t.quantity, 0);
    if (Math.abs(sum - x.quantity) > 1e-9 * Math.max(1, x.quantity)) fail('tranches', LOAN_MESSAGES.trancheSum(sum, x.quantity));
  }

  if (Object.keys(errors).length > 0) return { errors };
  return {
    value: {
      organization: organization!,
      market_maker: x.market_maker,
      asset: x.asset,
      model: x.model as LoanModel,
      quantity: x.quantity,
      quote_amount: x.quote_amount ?? 0,
      retainer_fee_usd_month: retainer,
      interest_rate_pct: x.interest_rate_pct ?? 0,
      settlement_asset: x.settlement_asset ?? 'USDT',
      collateral: x.collateral ?? null,
      exchanges,
      pairs,
      start_date: start,
      end_date: end,
      tranches,
    },
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Terms in the shape a client posts them (what a PATCH merges its fields into). */
export function presentTerms(t: LoanTerms & { organization: string }): LoanTermsInput {
  return {
    organization: t.organization,
    market_maker: t.market_maker,
    asset: t.asset,
    model: t.model,
    quantity: t.quantity,
    quote_amount: t.quote_amount,
    retainer_fee_usd_month: t.retainer_fee_usd_month,
    interest_rate_pct: t.interest_rate_pct,
    settlement_asset: t.settlement_asset,
    collateral: t.collateral,
    exchanges: t.exchanges,
    pairs: t.pairs,
    start_date: iso(t.start_date),
    end_date: iso(t.end_date),
    tranches: t.tranches.map((r) => ({
      quantity: r.quantity,
      disbursed_at: iso(r.disbursed_at),
      strike_basis: r.strike_basis,
      strike_price: r.strike_price,
      premium_pct: r.premium_pct,
      expires_at: iso(r.expires_at),
    })),
  };
}
