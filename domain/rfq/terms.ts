// An RFQ and a proposal as posted (addendum section 8; docs/rfq.md, "Fields") checked
// against the reference data, the RFQ and each other: every invalid field is named, nested
// ones nested (`{loan: {tranches: [{}, {strike_price: [...]}]}}`). Their shapes (types,
// choices, bounds, lengths) were the contract's (api/openapi.yaml), whose body types must
// fit the inputs below. Unset optional fields take their defaults. The caller's rights are
// checked by the commands (domain/rfq/commands.ts).
import type { LoanModel, StrikeBasis } from '../loans/loan.ts';
import { LOAN_MESSAGES } from '../loans/terms.ts';
import { isTargetMetric, defaultDirection, type Direction, type TargetSession } from '../targets/facts.ts';
import type { Organization, ReferenceLists } from '../reference/repository.ts';
import type { FieldErrors } from '../outcome.ts';
import type { Kpi, PairRef, ProposalTerms, ProposalTranche, Rfq, RfqTerms } from './rfq.ts';
import { pairsOf } from './comparison.ts';
import { parseTimestamp } from '../../schemas/timestamps.ts';

/** A requirement or KPI as posted. */
export interface KpiInput {
  metric: string;
  exchange?: string | null;
  pair?: string | null;
  threshold: number;
  direction?: Direction | null;
  market_hours?: string | null;
}

/** An RFQ's terms as posted (POST: all that are required; PATCH: those that change). */
export interface RfqInput {
  asset?: string;
  title?: string;
  description?: string;
  models?: LoanModel[];
  exchanges?: string[];
  pairs?: string[];
  loan_budget?: { quantity: number; quote_amount?: number };
  term_days?: number;
  requirements?: KpiInput[];
  invited?: string[];
  sealed?: boolean;
  /** ISO 8601 or epoch ms. */
  deadline?: string | number;
}

/** A proposal's terms as posted (POST: all that are required; a revision: those that change). */
export interface ProposalInput {
  market_maker?: string;
  model?: LoanModel;
  loan?: {
    quantity: number;
    quote_amount?: number;
    tranches: { quantity: number; strike_basis: StrikeBasis; strike_price?: number | null; premium_pct?: number | null; expires_after_days: number }[];
  };
  retainer_fee_usd_month?: number;
  interest_rate_pct?: number;
  kpis?: KpiInput[];
  exchanges?: string[];
  notes?: string;
  /** ISO 8601 or epoch ms. */
  valid_until?: string | number;
}

export const RFQ_MESSAGES = {
  asset: (a: string) => `"${a}" is not an asset of a project you manage.`,
  exchange: LOAN_MESSAGES.exchange,
  pair: (p: string) => `"${p}" is not a pair of the asset on a listed exchange.`,
  kpiExchange: (e: string) => `"${e}" is not one of the listed exchanges.`,
  kpiPair: (p: string) => `"${p}" is not one of the RFQ's pairs on the exchange(s).`,
  metric: (m: string) => `"${m}" is not a metric identifier of mm targets.`,
  repeatedKpi: 'Another item has the same metric, exchange, pair and market hours.',
  oppositeKpi: (exchange: string, pair: string) => `Another item of the same metric and market hours holds ${pair} on ${exchange} in the other direction.`,
  invited: (s: string) => `"${s}" is not a market-maker organization.`,
  future: 'Must be in the future.',
  model: (models: readonly string[]) => `Not one of the models this RFQ accepts: ${models.join(', ')}.`,
  budget: (max: number) => `Exceeds the RFQ's budget of ${max}.`,
  trancheSum: 'The tranches\' quantities must add up to the loan\'s quantity.',
  strikePrice: 'A strike price above 0 is required for a fixed strike.',
  premium: LOAN_MESSAGES.premium,
  retainer: 'A retainer fee above 0 is required for the retainer and hybrid models.',
  proposalExchange: (e: string) => `"${e}" is not one of the RFQ's exchanges.`,
} as const;

/** Collects errors by field; nested errors are objects of the same shape. */
class Errors {
  readonly out: FieldErrors = {};
  add(field: string, message: string): void {
    const prev = this.out[field];
    this.out[field] = Array.isArray(prev) ? [...(prev as string[]), message] : [message];
  }
  nest(field: string, inner: FieldErrors | FieldErrors[]): void {
    this.out[field] = inner;
  }
  get any(): boolean {
    return Object.keys(this.out).length > 0;
  }
}

/** A valid instant (the contract checked its form) that must lie ahead. */
function future(e: Errors, field: string, v: string | number, now: number): number {
  const ms = parseTimestamp(v) ?? 0;
  if (ms <= now) e.add(field, RFQ_MESSAGES.future);
  return ms;
}

/** What checking needs about the world, read once per request. */
export interface RfqContext {
  lists: ReferenceLists;
  organizations: Map<string, Organization>;
  /** Assets the caller may make RFQs for (owned by a project the caller manages). */
  manageableAssets: Set<string>;
  now: number;
}

const kpiKey = (k: Kpi) => [k.metric, k.exchange ?? '', k.pair ?? '', k.market_hours ?? ''].join('\u0000');

/** Requirements or KPIs: each an mm metric, on listed exchanges and pairs, each key once. */
function kpis(list: readonly KpiInput[] | undefined, scope: { exchanges: readonly string[]; pairs: readonly PairRef[] }): { value: Kpi[]; errors?: FieldErrors[] } {
  const items: FieldErrors[] = [];
  const value: Kpi[] = [];
  const seen = new Set<string>();
  let bad = false;
  for (const x of list ?? []) {
    const e = new Errors();
    if (!isTargetMetric('mm', x.metric)) e.add('metric', RFQ_MESSAGES.metric(x.metric));
    const exchange = x.exchange || null;
    if (exchange && !scope.exchanges.includes(exchange)) e.add('exchange', RFQ_MESSAGES.kpiExchange(exchange));
    const pair = x.pair || null;
    if (pair && !scope.pairs.some((p) => p.pair === pair && (exchange ? p.exchange === exchange : scope.exchanges.includes(p.exchange)))) e.add('pair', RFQ_MESSAGES.kpiPair(pair));
    const hours = x.market_hours && x.market_hours !== 'default' ? (x.market_hours as TargetSession) : null;
    if (!e.any) {
      const k: Kpi = { metric: x.metric, exchange, pair, threshold: x.threshold, direction: x.direction ?? defaultDirection(x.metric), market_hours: hours };
      if (seen.has(kpiKey(k))) e.add('non_field_errors', RFQ_MESSAGES.repeatedKpi);
      else {
        // One market's metric is held one way: a target has one direction (domain/rfq/award.ts).
        const covered = pairsOf(k, scope.pairs, scope.exchanges);
        const opposite = value.filter((v) => v.metric === k.metric && v.market_hours === k.market_hours && v.direction !== k.direction);
        const held = opposite.flatMap((v) => pairsOf(v, scope.pairs, scope.exchanges));
        const both = covered.find((p) => held.some((q) => q.exchange === p.exchange && q.pair === p.pair));
        if (both) e.add('non_field_errors', RFQ_MESSAGES.oppositeKpi(both.exchange, both.pair));
      }
      seen.add(kpiKey(k));
      value.push(k);
    }
    if (e.any) bad = true;
    items.push(e.out);
  }
  return bad ? { value, errors: items } : { value };
}

/** An RFQ's terms from a body; `base` (PATCH) supplies the fields the body leaves out. */
export function rfqTermsOf(given: RfqInput, c: RfqContext, base?: RfqTerms): { terms: RfqTerms } | { errors: FieldErrors } {
  const x = (base ? { ...termsAsInput(base), ...given } : given) as Required<Pick<RfqInput, 'asset' | 'title' | 'models' | 'exchanges' | 'loan_budget' | 'term_days' | 'deadline'>> & RfqInput;
  const e = new Errors();
  const asset = x.asset;
  if (!c.manageableAssets.has(asset)) e.add('asset', RFQ_MESSAGES.asset(asset));
  const assetPairs = c.lists.pairs.filter((p) => p.asset === asset);
  const models = [...new Set(x.models)] as LoanModel[];
  const exchanges = [...new Set(x.exchanges)];
  if (!e.out.asset) for (const s of exchanges) if (!assetPairs.some((p) => p.exchange === s)) e.add('exchanges', RFQ_MESSAGES.exchange(s));
  // Pair names, as a loan's: default every pair of the asset on the listed exchanges.
  let names = [...new Set(assetPairs.filter((p) => exchanges.includes(p.exchange)).map((p) => p.pair))];
  if (x.pairs && x.pairs.length > 0) {
    for (const name of x.pairs) if (!assetPairs.some((p) => p.pair === name && exchanges.includes(p.exchange))) e.add('pairs', RFQ_MESSAGES.pair(name));
    names = [...new Set(x.pairs)];
  }
  const markets: PairRef[] = assetPairs.filter((p) => exchanges.includes(p.exchange) && names.includes(p.pair)).map((p) => ({ exchange: p.exchange, pair: p.pair }));
  const req = kpis(x.requirements, { exchanges, pairs: markets });
  if (req.errors) e.nest('requirements', req.errors);
  for (const s of x.invited ?? []) if (c.organizations.get(s)?.kind !== 'market_maker') e.add('invited', RFQ_MESSAGES.invited(s));
  const deadline = future(e, 'deadline', x.deadline, c.now);
  if (e.any) return { errors: e.out };
  return {
    terms: {
      asset,
      title: x.title,
      description: x.description ?? '',
      models,
      exchanges,
      pairs: names,
      markets,
      loan_budget: { quantity: x.loan_budget.quantity, quote_amount: x.loan_budget.quote_amount ?? 0 },
      term_days: x.term_days,
      requirements: req.value,
      invited: [...new Set(x.invited ?? [])].sort(),
      sealed: x.sealed ?? false,
      deadline,
    },
  };
}

/** Terms as a body would give them, for PATCH (the body's fields replace these). */
function termsAsInput(t: RfqTerms): RfqInput {
  const { markets: _, ...rest } = t;
  return rest as unknown as RfqInput;
}

/** A proposal's terms against its RFQ; `base` (a revision) supplies the fields the body leaves out. */
export function proposalTermsOf(given: Partial<ProposalInput>, rfq: Rfq, now: number, base?: ProposalTerms): { terms: ProposalTerms } | { errors: FieldErrors } {
  const x = (base ? { ...(base as unknown as ProposalInput), ...given } : given) as Required<Pick<ProposalInput, 'model' | 'loan' | 'valid_until'>> & ProposalInput;
  const e = new Errors();
  const model = x.model as LoanModel;
  if (!rfq.models.includes(model)) e.add('model', RFQ_MESSAGES.model(rfq.models));
  const exchanges = x.exchanges && x.exchanges.length > 0 ? [...new Set(x.exchanges)] : [...rfq.exchanges];
  for (const s of exchanges) if (!rfq.exchanges.includes(s)) e.add('exchanges', RFQ_MESSAGES.proposalExchange(s));

  const le = new Errors();
  if (x.loan.quantity > rfq.loan_budget.quantity) le.add('quantity', `Ensure this value is less than or equal to ${rfq.loan_budget.quantity}.`);
  const quote = x.loan.quote_amount ?? 0;
  if (quote > rfq.loan_budget.quote_amount) le.add('quote_amount', RFQ_MESSAGES.budget(rfq.loan_budget.quote_amount));
  const items: FieldErrors[] = [];
  const tranches: ProposalTranche[] = x.loan.tranches.map((t) => {
    const te = new Errors();
    if (t.strike_basis === 'fixed' && !(t.strike_price && t.strike_price > 0)) te.add('strike_price', RFQ_MESSAGES.strikePrice);
    if (t.strike_basis === 'twap_premium' && (t.premium_pct === undefined || t.premium_pct === null)) te.add('premium_pct', RFQ_MESSAGES.premium);
    items.push(te.out);
    return { quantity: t.quantity, strike_basis: t.strike_basis as StrikeBasis, strike_price: t.strike_basis === 'fixed' ? (t.strike_price ?? null) : null, premium_pct: t.strike_basis === 'twap_premium' ? (t.premium_pct ?? null) : null, expires_after_days: t.expires_after_days };
  });
  if (items.some((i) => Object.keys(i).length > 0)) le.nest('tranches', items);
  else if (Math.abs(tranches.reduce((acc, t) => acc + t.quantity, 0) - x.loan.quantity) > 1e-9 * Math.max(1, x.loan.quantity)) le.add('tranches', RFQ_MESSAGES.trancheSum);
  if (le.any) e.nest('loan', le.out);

  const retainer = x.retainer_fee_usd_month ?? 0;
  if (retainer <= 0 && (model === 'retainer' || model === 'hybrid')) e.add('retainer_fee_usd_month', RFQ_MESSAGES.retainer);
  const k = kpis(x.kpis, { exchanges, pairs: rfq.markets });
  if (k.errors) e.nest('kpis', k.errors);
  const validUntil = future(e, 'valid_until', x.valid_until, now);
  if (e.any) return { errors: e.out };
  return {
    terms: { model, loan: { quantity: x.loan.quantity, quote_amount: quote, tranches }, retainer_fee_usd_month: retainer, interest_rate_pct: x.interest_rate_pct ?? 0, kpis: k.value, exchanges, notes: x.notes ?? '', valid_until: validUntil },
  };
}
