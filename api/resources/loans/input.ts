// A loan's terms as posted (POST, or PATCH over the draft's terms) checked field by field
// (addendum section 7). Every invalid field is named; a tranche's errors sit at its index.
// The lender is the asset's owner: a caller lends only assets its projects own (staff any).
import { DateTime } from 'luxon';
import { LOAN_MODELS, STRIKE_BASES, type LoanModel, type LoanTerms, type StrikeBasis, type Tranche } from '../../../domain/loans/loan.ts';
import type { LoanAccess } from '../../../domain/loans/visibility.ts';
import type { Organization, ReferenceLists } from '../../../domain/reference/repository.ts';
import { MESSAGES, type FieldErrors } from '../../http/errors.ts';

export const LOAN_MESSAGES = {
  asset: (symbol: string) => `"${symbol}" is not an asset your organization owns.`,
  organization: 'Must be the owner of the asset (the lender).',
  marketMaker: (slug: string) => `"${slug}" is not a market maker organization.`,
  exchange: (slug: string) => `"${slug}" is not a known exchange.`,
  pair: (pair: string) => `"${pair}" is not a pair of the asset on any of the loan's exchanges.`,
  choice: (values: readonly string[]) => `Not a valid choice; expected one of: ${values.join(', ')}.`,
  positive: 'Ensure this value is greater than 0.',
  notNegative: 'Ensure this value is greater than or equal to 0.',
  number: 'A valid number is required.',
  dateTime: 'A valid ISO 8601 date-time with a time zone is required.',
  endAfterStart: 'Must be later than start_date.',
  retainerFee: 'Must be greater than 0 for the retainer and hybrid models.',
  trancheSum: (sum: number, quantity: number) => `The tranches' quantities add up to ${sum}, not the loan's quantity ${quantity}.`,
  strikePrice: 'A strike price greater than 0 is required for a fixed strike.',
  premium: 'A premium of 0 or more is required for a twap_premium strike.',
  expiry: 'Must be later than disbursed_at.',
  list: 'Expected a non-empty list.',
  object: 'Expected an object.',
} as const;

export interface LoanContext {
  access: LoanAccess;
  organizations: Map<string, Organization>;
  lists: ReferenceLists;
}

type Raw = Record<string, unknown>;
type Checked<T> = { value: T; errors?: undefined } | { errors: FieldErrors; value?: undefined };

function num(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** ISO 8601 with an offset or Z, in ms. */
export function dateTimeOf(v: unknown): number | undefined {
  if (typeof v !== 'string' || !/(Z|[+-]\d\d:?\d\d)$/i.test(v.trim())) return undefined;
  const d = DateTime.fromISO(v.trim(), { setZone: true });
  return d.isValid ? d.toMillis() : undefined;
}

const stringList = (v: unknown): string[] | undefined => (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string' && x !== '') ? [...new Set(v as string[])] : undefined);

/** The terms, or the body's field errors. `base` holds a draft's terms that a PATCH leaves as they are. */
export function checkLoanTerms(raw: unknown, c: LoanContext, base?: LoanTerms & { organization: string }): Checked<LoanTerms & { organization: string }> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { errors: { non_field_errors: ['Expected a JSON object.'] } };
  const given = raw as Raw;
  const x: Raw = base ? { ...presentTerms(base), ...given } : given;
  const errors: FieldErrors = {};
  const fail = (f: string, m: string) => {
    errors[f] = [m];
  };
  const has = (f: string) => x[f] !== undefined && x[f] !== null && x[f] !== '';
  const str = (f: string): string | undefined => {
    if (!has(f)) fail(f, MESSAGES.required);
    else if (typeof x[f] !== 'string') fail(f, 'Not a valid string.');
    else return x[f] as string;
    return undefined;
  };
  const amount = (f: string, opts: { required?: boolean; positive?: boolean }): number | undefined => {
    if (!has(f)) {
      if (opts.required) fail(f, MESSAGES.required);
      return opts.required ? undefined : 0;
    }
    const n = num(x[f]);
    if (n === undefined) fail(f, LOAN_MESSAGES.number);
    else if (opts.positive ? n <= 0 : n < 0) fail(f, opts.positive ? LOAN_MESSAGES.positive : LOAN_MESSAGES.notNegative);
    else return n;
    return undefined;
  };
  const when = (f: string): number | undefined => {
    if (!has(f)) fail(f, MESSAGES.required);
    else {
      const t = dateTimeOf(x[f]);
      if (t === undefined) fail(f, LOAN_MESSAGES.dateTime);
      return t;
    }
    return undefined;
  };

  const asset = str('asset');
  const assetRow = asset === undefined ? undefined : c.lists.assets.find((a) => a.symbol === asset);
  if (asset !== undefined && (!assetRow || !c.access.lendable.has(asset))) fail('asset', LOAN_MESSAGES.asset(asset));
  const organization = assetRow?.owner;
  if (has('organization') && organization !== undefined && x.organization !== organization) fail('organization', LOAN_MESSAGES.organization);

  const marketMaker = str('market_maker');
  const mm = marketMaker === undefined ? undefined : c.organizations.get(marketMaker);
  if (marketMaker !== undefined && mm?.kind !== 'market_maker') fail('market_maker', LOAN_MESSAGES.marketMaker(marketMaker));

  const model = str('model');
  if (model !== undefined && !LOAN_MODELS.includes(model as LoanModel)) fail('model', LOAN_MESSAGES.choice(LOAN_MODELS));
  const quantity = amount('quantity', { required: true, positive: true });
  const quoteAmount = amount('quote_amount', {});
  const retainer = amount('retainer_fee_usd_month', {});
  if (retainer !== undefined && (model === 'retainer' || model === 'hybrid') && !(retainer > 0)) fail('retainer_fee_usd_month', LOAN_MESSAGES.retainerFee);
  const interest = amount('interest_rate_pct', {});
  const settlementAsset = has('settlement_asset') ? str('settlement_asset') : 'USDT';

  let collateral: LoanTerms['collateral'] = null;
  if (has('collateral')) {
    const v = x.collateral;
    const o = typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : undefined;
    const n = num(o?.amount);
    if (!o || typeof o.asset !== 'string' || o.asset === '' || n === undefined || n <= 0) errors.collateral = { ...(o ? {} : { non_field_errors: [LOAN_MESSAGES.object] }), ...(o && (typeof o.asset !== 'string' || o.asset === '') ? { asset: [MESSAGES.required] } : {}), ...(o && (n === undefined || n <= 0) ? { amount: [LOAN_MESSAGES.positive] } : {}) };
    else collateral = { asset: o.asset, amount: n };
  }

  const exchanges = has('exchanges') ? stringList(x.exchanges) : undefined;
  if (!exchanges) fail('exchanges', has('exchanges') ? LOAN_MESSAGES.list : MESSAGES.required);
  else {
    const known = new Set(c.lists.exchanges.map((e) => e.slug));
    const bad = exchanges.filter((e) => !known.has(e));
    if (bad.length > 0) errors.exchanges = bad.map(LOAN_MESSAGES.exchange);
  }
  const pairs = has('pairs') ? stringList(x.pairs) : undefined;
  if (!pairs) fail('pairs', has('pairs') ? LOAN_MESSAGES.list : MESSAGES.required);
  else if (exchanges && asset !== undefined) {
    const bad = pairs.filter((p) => !c.lists.pairs.some((q) => q.pair === p && q.asset === asset && exchanges.includes(q.exchange)));
    if (bad.length > 0) errors.pairs = bad.map(LOAN_MESSAGES.pair);
  }

  const start = when('start_date');
  const end = when('end_date');
  if (start !== undefined && end !== undefined && end <= start) fail('end_date', LOAN_MESSAGES.endAfterStart);

  const tranches = checkTranches(x.tranches, start);
  if (tranches.errors) errors.tranches = tranches.errors;
  else if (quantity !== undefined) {
    const sum = tranches.value.reduce((s, t) => s + t.quantity, 0);
    if (Math.abs(sum - quantity) > 1e-9 * Math.max(1, quantity)) fail('tranches', LOAN_MESSAGES.trancheSum(sum, quantity));
  }

  if (Object.keys(errors).length > 0) return { errors };
  return {
    value: {
      organization: organization!,
      market_maker: marketMaker!,
      asset: asset!,
      model: model as LoanModel,
      quantity: quantity!,
      quote_amount: quoteAmount!,
      retainer_fee_usd_month: retainer!,
      interest_rate_pct: interest!,
      settlement_asset: settlementAsset!,
      collateral,
      exchanges: exchanges!,
      pairs: pairs!,
      start_date: start!,
      end_date: end!,
      tranches: tranches.value!,
    },
  };
}

/** Tranches as posted: ids 1..n in order; `disbursed_at` defaults to the start; settlement is the service's. */
function checkTranches(v: unknown, start: number | undefined): { value: Tranche[]; errors?: undefined } | { errors: string[] | FieldErrors[]; value?: undefined } {
  if (v === undefined || v === null) return { errors: [MESSAGES.required] };
  if (!Array.isArray(v) || v.length === 0) return { errors: [LOAN_MESSAGES.list] };
  const out: Tranche[] = [];
  const itemErrors: FieldErrors[] = [];
  let bad = false;
  v.forEach((raw: unknown, i) => {
    const e: FieldErrors = {};
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      itemErrors.push({ non_field_errors: [LOAN_MESSAGES.object] });
      bad = true;
      return;
    }
    const t = raw as Raw;
    const quantity = num(t.quantity);
    if (quantity === undefined || quantity <= 0) e.quantity = [quantity === undefined ? (t.quantity === undefined ? MESSAGES.required : LOAN_MESSAGES.number) : LOAN_MESSAGES.positive];
    const disbursed = t.disbursed_at === undefined || t.disbursed_at === null ? start : dateTimeOf(t.disbursed_at);
    if (disbursed === undefined && t.disbursed_at !== undefined && t.disbursed_at !== null) e.disbursed_at = [LOAN_MESSAGES.dateTime];
    const basis = t.strike_basis;
    if (basis === undefined) e.strike_basis = [MESSAGES.required];
    else if (!STRIKE_BASES.includes(basis as StrikeBasis)) e.strike_basis = [LOAN_MESSAGES.choice(STRIKE_BASES)];
    const strike = num(t.strike_price);
    const premium = num(t.premium_pct);
    if (basis === 'fixed' && (strike === undefined || strike <= 0)) e.strike_price = [LOAN_MESSAGES.strikePrice];
    if (basis === 'twap_premium' && (premium === undefined || premium < 0)) e.premium_pct = [LOAN_MESSAGES.premium];
    const expires = t.expires_at === undefined || t.expires_at === null ? undefined : dateTimeOf(t.expires_at);
    if (expires === undefined) e.expires_at = [t.expires_at === undefined || t.expires_at === null ? MESSAGES.required : LOAN_MESSAGES.dateTime];
    else if (disbursed !== undefined && expires <= disbursed) e.expires_at = [LOAN_MESSAGES.expiry];
    itemErrors.push(e);
    if (Object.keys(e).length > 0) {
      bad = true;
      return;
    }
    out.push({
      id: i + 1,
      quantity: quantity!,
      disbursed_at: disbursed!,
      strike_basis: basis as StrikeBasis,
      strike_price: basis === 'fixed' ? strike! : null,
      premium_pct: basis === 'twap_premium' ? premium! : null,
      expires_at: expires!,
      settlement: null,
      settled_quantity: null,
    });
  });
  // A start that failed to parse is named at start_date; the tranches wait for it.
  if (bad) return { errors: itemErrors };
  if (start === undefined) return { errors: ['Needs a valid start_date.'] };
  return { value: out };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Terms in the shape a client posts them (what a PATCH merges its fields into). */
export function presentTerms(t: LoanTerms & { organization: string }): Raw {
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
