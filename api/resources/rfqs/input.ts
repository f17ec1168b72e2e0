// An RFQ and a proposal as posted (addendum section 8; docs/rfq.md, "Fields") checked field
// by field: every invalid field is named, nested ones as nested objects
// (`{loan: {tranches: [{}, {strike_price: [...]}]}}`). Unset optional fields take their
// defaults. The caller's rights are checked by the routes; here only what the body says.
import { LOAN_MODELS, STRIKE_BASES, type LoanModel, type StrikeBasis } from '../../../domain/loans/loan.ts';
import { isTargetMetric, defaultDirection, DIRECTIONS, TARGET_SESSIONS, type TargetSession } from '../../../domain/targets/facts.ts';
import type { Organization, ReferenceLists } from '../../../domain/reference/repository.ts';
import type { Kpi, PairRef, ProposalTerms, ProposalTranche, Rfq, RfqTerms } from '../../../domain/rfq/rfq.ts';
import { parseTimestamp } from '../../../schemas/timestamps.ts';
import { MESSAGES, type FieldErrors } from '../../http/errors.ts';

export const RFQ_MESSAGES = {
  asset: (a: string) => `"${a}" is not an asset of a project you manage.`,
  exchange: (e: string) => `"${e}" is not an exchange with a pair of the asset.`,
  pair: (p: string) => `"${p}" is not a pair of the asset on a listed exchange.`,
  kpiExchange: (e: string) => `"${e}" is not one of the listed exchanges.`,
  kpiPair: (p: string) => `"${p}" is not one of the RFQ's pairs on the exchange(s).`,
  metric: (m: string) => `"${m}" is not a metric identifier of mm targets.`,
  repeatedKpi: 'Another item has the same metric, exchange, pair and market hours.',
  invited: (s: string) => `"${s}" is not a market-maker organization.`,
  future: 'Must be in the future.',
  dateTime: 'Enter a valid date-time (ISO 8601, UTC when no offset is given, or epoch milliseconds).',
  model: (models: readonly string[]) => `Not one of the models this RFQ accepts: ${models.join(', ')}.`,
  budget: (max: number) => `Exceeds the RFQ's budget of ${max}.`,
  trancheSum: 'The tranches\' quantities must add up to the loan\'s quantity.',
  strikePrice: 'A strike price above 0 is required for a fixed strike.',
  premium: 'A premium in percent (above -100) is required for a twap_premium strike.',
  retainer: 'A retainer fee above 0 is required for the retainer and hybrid models.',
  proposalExchange: (e: string) => `"${e}" is not one of the RFQ's exchanges.`,
  choice: (values: readonly string[]) => `Not a valid choice; expected one of: ${values.join(', ')}.`,
} as const;

type Raw = Record<string, unknown>;

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

const given = (v: unknown) => v !== undefined && v !== null && v !== '';

function num(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

function bool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  return undefined;
}

/** A list: a JSON array, or a comma-separated string (as form fields come). */
function strList(v: unknown): string[] | undefined {
  if (Array.isArray(v)) return v.every((x) => typeof x === 'string') ? (v as string[]).map((x) => x.trim()).filter((x) => x !== '') : undefined;
  if (typeof v === 'string') return v.split(',').map((x) => x.trim()).filter((x) => x !== '');
  return undefined;
}

function dateTime(e: Errors, field: string, v: unknown, now: number, required: boolean): number | undefined {
  if (!given(v)) {
    if (required) e.add(field, MESSAGES.required);
    return undefined;
  }
  const ms = typeof v === 'number' || typeof v === 'string' ? parseTimestamp(v) : undefined;
  if (ms === undefined) e.add(field, RFQ_MESSAGES.dateTime);
  else if (ms <= now) e.add(field, RFQ_MESSAGES.future);
  return ms;
}

function number(e: Errors, field: string, v: unknown, o: { required?: boolean; min?: number; exclusiveMin?: boolean; max?: number; integer?: boolean; fallback?: number }): number | undefined {
  if (!given(v)) {
    if (o.required) e.add(field, MESSAGES.required);
    return o.fallback;
  }
  const n = num(v);
  if (n === undefined || (o.integer && !Number.isInteger(n))) {
    e.add(field, o.integer ? 'A valid integer is required.' : 'A valid number is required.');
    return undefined;
  }
  if (o.min !== undefined && (o.exclusiveMin ? n <= o.min : n < o.min)) e.add(field, o.exclusiveMin ? `Ensure this value is greater than ${o.min}.` : `Ensure this value is greater than or equal to ${o.min}.`);
  else if (o.max !== undefined && n > o.max) e.add(field, `Ensure this value is less than or equal to ${o.max}.`);
  return n;
}

function text(e: Errors, field: string, v: unknown, o: { required?: boolean; max: number }): string {
  if (!given(v)) {
    if (o.required) e.add(field, v === '' ? 'This field may not be blank.' : MESSAGES.required);
    return '';
  }
  if (typeof v !== 'string') {
    e.add(field, 'Not a valid string.');
    return '';
  }
  if (v.length > o.max) e.add(field, `Ensure this field has no more than ${o.max} characters.`);
  return v;
}

function object(e: Errors, field: string, v: unknown, required: boolean): Raw | undefined {
  if (!given(v)) {
    if (required) e.add(field, MESSAGES.required);
    return undefined;
  }
  if (typeof v !== 'object' || Array.isArray(v)) {
    e.add(field, 'Expected an object.');
    return undefined;
  }
  return v as Raw;
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

/** Requirements or KPIs: each an mm metric, on listed exchanges and pairs. */
function kpis(v: unknown, scope: { exchanges: readonly string[]; pairs: readonly PairRef[] }): { value: Kpi[]; errors?: FieldErrors[] | string[] } {
  if (!given(v)) return { value: [] };
  if (!Array.isArray(v)) return { value: [], errors: ['Expected a list of items.'] };
  const items: FieldErrors[] = [];
  const value: Kpi[] = [];
  const seen = new Set<string>();
  let bad = false;
  for (const raw of v as unknown[]) {
    const e = new Errors();
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      items.push({ non_field_errors: ['Expected an object.'] });
      bad = true;
      continue;
    }
    const x = raw as Raw;
    const metric = text(e, 'metric', x.metric, { required: true, max: 200 });
    if (metric && !isTargetMetric('mm', metric)) e.add('metric', RFQ_MESSAGES.metric(metric));
    const exchange = given(x.exchange) ? text(e, 'exchange', x.exchange, { max: 100 }) : null;
    if (exchange && !scope.exchanges.includes(exchange)) e.add('exchange', RFQ_MESSAGES.kpiExchange(exchange));
    const pair = given(x.pair) ? text(e, 'pair', x.pair, { max: 100 }) : null;
    if (pair && !scope.pairs.some((p) => p.pair === pair && (exchange ? p.exchange === exchange : scope.exchanges.includes(p.exchange)))) e.add('pair', RFQ_MESSAGES.kpiPair(pair));
    const threshold = number(e, 'threshold', x.threshold, { required: true });
    let direction = defaultDirection(metric);
    if (given(x.direction)) {
      if ((DIRECTIONS as readonly unknown[]).includes(x.direction)) direction = x.direction as Kpi['direction'];
      else e.add('direction', RFQ_MESSAGES.choice(DIRECTIONS));
    }
    let hours: TargetSession | null = null;
    if (given(x.market_hours) && x.market_hours !== 'default') {
      if ((TARGET_SESSIONS as readonly unknown[]).includes(x.market_hours)) hours = x.market_hours as TargetSession;
      else e.add('market_hours', RFQ_MESSAGES.choice(['default', ...TARGET_SESSIONS]));
    }
    if (!e.any) {
      const k: Kpi = { metric, exchange: exchange || null, pair: pair || null, threshold: threshold!, direction, market_hours: hours };
      if (seen.has(kpiKey(k))) e.add('non_field_errors', RFQ_MESSAGES.repeatedKpi);
      seen.add(kpiKey(k));
      value.push(k);
    }
    if (e.any) bad = true;
    items.push(e.out);
  }
  return bad ? { value, errors: items } : { value };
}

/** An RFQ's terms from a body; `base` (PATCH) supplies the fields the body leaves out. */
export function checkRfq(raw: Raw, c: RfqContext, base?: RfqTerms): { terms: RfqTerms } | { errors: FieldErrors } {
  const x: Raw = base ? { ...termsAsInput(base), ...raw } : raw;
  const e = new Errors();
  const asset = text(e, 'asset', x.asset, { required: true, max: 100 });
  if (asset && !c.manageableAssets.has(asset)) e.add('asset', RFQ_MESSAGES.asset(asset));
  const assetPairs = c.lists.pairs.filter((p) => p.asset === asset);
  const title = text(e, 'title', x.title, { required: true, max: 200 });
  const description = text(e, 'description', x.description, { max: 10_000 });

  let models: LoanModel[] = [];
  const m = strList(x.models);
  if (!given(x.models) || (m && m.length === 0)) e.add('models', given(x.models) ? 'This list may not be empty.' : MESSAGES.required);
  else if (!m) e.add('models', 'Expected a list of items.');
  else {
    for (const v of m) if (!(LOAN_MODELS as readonly string[]).includes(v)) e.add('models', `"${v}" ${RFQ_MESSAGES.choice(LOAN_MODELS).toLowerCase()}`);
    models = [...new Set(m)] as LoanModel[];
  }

  let exchanges: string[] = [];
  const ex = strList(x.exchanges);
  if (!given(x.exchanges) || (ex && ex.length === 0)) e.add('exchanges', given(x.exchanges) ? 'This list may not be empty.' : MESSAGES.required);
  else if (!ex) e.add('exchanges', 'Expected a list of items.');
  else {
    exchanges = [...new Set(ex)];
    if (asset && !e.out.asset) for (const s of exchanges) if (!assetPairs.some((p) => p.exchange === s)) e.add('exchanges', RFQ_MESSAGES.exchange(s));
  }

  // Pair names, as a loan's: default every pair of the asset on the listed exchanges.
  let names = [...new Set(assetPairs.filter((p) => exchanges.includes(p.exchange)).map((p) => p.pair))];
  if (given(x.pairs)) {
    const l = strList(x.pairs);
    if (!l) e.add('pairs', 'Expected a list of items.');
    else if (l.length === 0) e.add('pairs', 'This list may not be empty.');
    else {
      for (const name of l) if (!assetPairs.some((p) => p.pair === name && exchanges.includes(p.exchange))) e.add('pairs', RFQ_MESSAGES.pair(name));
      names = [...new Set(l)];
    }
  }
  const markets: PairRef[] = assetPairs.filter((p) => exchanges.includes(p.exchange) && names.includes(p.pair)).map((p) => ({ exchange: p.exchange, pair: p.pair }));

  const budget = object(e, 'loan_budget', x.loan_budget, true);
  let loanBudget = { quantity: 0, quote_amount: 0 };
  if (budget) {
    const be = new Errors();
    const quantity = number(be, 'quantity', budget.quantity, { required: true, min: 0, exclusiveMin: true });
    const quote = number(be, 'quote_amount', budget.quote_amount, { min: 0, fallback: 0 });
    if (be.any) e.nest('loan_budget', be.out);
    else loanBudget = { quantity: quantity!, quote_amount: quote! };
  }
  const term = number(e, 'term_days', x.term_days, { required: true, min: 1, max: 3650, integer: true });

  const req = kpis(x.requirements, { exchanges, pairs: markets });
  if (req.errors) e.nest('requirements', req.errors as FieldErrors[]);

  let invited: string[] = [];
  if (given(x.invited)) {
    const l = strList(x.invited);
    if (!l) e.add('invited', 'Expected a list of items.');
    else {
      for (const s of l) if (c.organizations.get(s)?.kind !== 'market_maker') e.add('invited', RFQ_MESSAGES.invited(s));
      invited = [...new Set(l)].sort();
    }
  }
  let sealed = false;
  if (given(x.sealed)) {
    const b = bool(x.sealed);
    if (b === undefined) e.add('sealed', 'Must be a valid boolean.');
    else sealed = b;
  }
  const deadline = dateTime(e, 'deadline', x.deadline, c.now, true);
  if (e.any) return { errors: e.out };
  return {
    terms: { asset, title, description, models, exchanges, pairs: names, markets, loan_budget: loanBudget, term_days: term!, requirements: req.value, invited, sealed, deadline: deadline! },
  };
}

/** Terms as a body would give them, for PATCH (the body's fields replace these). */
function termsAsInput(t: RfqTerms): Raw {
  const { markets: _, ...rest } = t;
  return rest as unknown as Raw;
}

function proposalAsInput(t: ProposalTerms): Raw {
  return { ...t } as unknown as Raw;
}

/** A proposal's terms against its RFQ; `base` (a revision) supplies the fields the body leaves out. */
export function checkProposal(raw: Raw, rfq: Rfq, now: number, base?: ProposalTerms): { terms: ProposalTerms } | { errors: FieldErrors } {
  const x: Raw = base ? { ...proposalAsInput(base), ...raw } : raw;
  const e = new Errors();
  let model: LoanModel = 'loan_call_option';
  if (!given(x.model)) e.add('model', MESSAGES.required);
  else if (!rfq.models.includes(x.model as LoanModel)) e.add('model', RFQ_MESSAGES.model(rfq.models));
  else model = x.model as LoanModel;

  let exchanges = [...rfq.exchanges];
  if (given(x.exchanges)) {
    const l = strList(x.exchanges);
    if (!l) e.add('exchanges', 'Expected a list of items.');
    else if (l.length === 0) e.add('exchanges', 'This list may not be empty.');
    else {
      for (const s of l) if (!rfq.exchanges.includes(s)) e.add('exchanges', RFQ_MESSAGES.proposalExchange(s));
      exchanges = [...new Set(l)];
    }
  }

  const loanRaw = object(e, 'loan', x.loan, true);
  let loan: ProposalTerms['loan'] = { quantity: 0, quote_amount: 0, tranches: [] };
  if (loanRaw) {
    const le = new Errors();
    const quantity = number(le, 'quantity', loanRaw.quantity, { required: true, min: 0, exclusiveMin: true, max: rfq.loan_budget.quantity });
    const quote = number(le, 'quote_amount', loanRaw.quote_amount, { min: 0, fallback: 0 });
    if (quote !== undefined && quote > rfq.loan_budget.quote_amount) le.add('quote_amount', RFQ_MESSAGES.budget(rfq.loan_budget.quote_amount));
    const tranches: ProposalTranche[] = [];
    if (!given(loanRaw.tranches)) le.add('tranches', MESSAGES.required);
    else if (!Array.isArray(loanRaw.tranches)) le.add('tranches', 'Expected a list of items.');
    else if (loanRaw.tranches.length === 0) le.add('tranches', 'This list may not be empty.');
    else {
      const items: FieldErrors[] = [];
      let bad = false;
      for (const t of loanRaw.tranches as unknown[]) {
        const te = new Errors();
        const o = typeof t === 'object' && t !== null && !Array.isArray(t) ? (t as Raw) : undefined;
        if (!o) te.add('non_field_errors', 'Expected an object.');
        else {
          const q = number(te, 'quantity', o.quantity, { required: true, min: 0, exclusiveMin: true });
          let basis: StrikeBasis = 'fixed';
          if (!given(o.strike_basis)) te.add('strike_basis', MESSAGES.required);
          else if (!(STRIKE_BASES as readonly unknown[]).includes(o.strike_basis)) te.add('strike_basis', RFQ_MESSAGES.choice(STRIKE_BASES));
          else basis = o.strike_basis as StrikeBasis;
          let strike: number | null = null;
          let premium: number | null = null;
          if (basis === 'fixed') {
            const s = num(o.strike_price);
            if (s === undefined || s <= 0) te.add('strike_price', RFQ_MESSAGES.strikePrice);
            else strike = s;
          } else {
            const pr = num(o.premium_pct);
            if (pr === undefined || pr <= -100) te.add('premium_pct', RFQ_MESSAGES.premium);
            else premium = pr;
          }
          const days = number(te, 'expires_after_days', o.expires_after_days, { required: true, min: 1, max: 3650, integer: true });
          if (!te.any) tranches.push({ quantity: q!, strike_basis: basis, strike_price: strike, premium_pct: premium, expires_after_days: days! });
        }
        if (te.any) bad = true;
        items.push(te.out);
      }
      if (bad) le.nest('tranches', items);
      else if (quantity !== undefined && Math.abs(tranches.reduce((s, t) => s + t.quantity, 0) - quantity) > 1e-9 * Math.max(1, quantity)) le.add('tranches', RFQ_MESSAGES.trancheSum);
    }
    if (le.any) e.nest('loan', le.out);
    else loan = { quantity: quantity!, quote_amount: quote!, tranches };
  }
  const retainer = number(e, 'retainer_fee_usd_month', x.retainer_fee_usd_month, { min: 0, fallback: 0 });
  if (retainer !== undefined && retainer <= 0 && (model === 'retainer' || model === 'hybrid') && !e.out.retainer_fee_usd_month) e.add('retainer_fee_usd_month', RFQ_MESSAGES.retainer);
  const interest = number(e, 'interest_rate_pct', x.interest_rate_pct, { min: 0, max: 1000, fallback: 0 });
  const k = kpis(x.kpis, { exchanges, pairs: rfq.markets });
  if (k.errors) e.nest('kpis', k.errors as FieldErrors[]);
  const notes = text(e, 'notes', x.notes, { max: 10_000 });
  const validUntil = dateTime(e, 'valid_until', x.valid_until, now, true);
  if (e.any) return { errors: e.out };
  return { terms: { model, loan, retainer_fee_usd_month: retainer!, interest_rate_pct: interest!, kpis: k.value, exchanges, notes, valid_until: validUntil! } };
}
