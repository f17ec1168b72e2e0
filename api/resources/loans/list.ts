// GET /v2/organizations/loans/ (addendum section 7): the loans the caller may see, filtered
// by `organizations` (lenders), `market_makers`, `assets` and `statuses`; a plain array, or
// `{count, page, page_size, results}` when `page` or `page_size` is given (as the targets
// list). Newest first.
import type { Context } from 'koa';
import { loanOf, LOAN_STATUSES, type LoanRecord } from '../../../domain/loans/loan.ts';
import { badRequest, type FieldErrors } from '../../http/errors.ts';
import { loanContext, presentLoans, type LoanServices } from './routes.ts';

const LISTS = ['organizations', 'market_makers', 'assets', 'statuses'] as const;
const MAX_LIST = 100;
const DEFAULT_PAGE_SIZE = 50;

function listOf(v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  const parts = (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).map((x) => x.trim()).filter((x) => x !== '');
  return parts.length === 0 ? undefined : [...new Set(parts)];
}

export function listLoans(s: LoanServices) {
  return async (ctx: Context) => {
    const q = ctx.query;
    const errors: FieldErrors = {};
    const fail = (f: string, m: string) => {
      errors[f] = [...((errors[f] as string[] | undefined) ?? []), m];
    };
    const lists: Partial<Record<(typeof LISTS)[number], string[]>> = {};
    for (const name of LISTS) {
      const l = listOf(q[name]);
      if (l && l.length > MAX_LIST) fail(name, `Ensure this field has no more than ${MAX_LIST} elements.`);
      if (l) lists[name] = l;
    }
    for (const v of lists.statuses ?? []) if (!(LOAN_STATUSES as readonly string[]).includes(v)) fail('statuses', `"${v}" is not a valid choice; expected one of: ${LOAN_STATUSES.join(', ')}.`);
    const single = (name: string) => (Array.isArray(q[name]) ? (q[name] as string[]).at(-1) : (q[name] as string | undefined));
    const int = (name: string, min: number, max: number): number | undefined => {
      const raw = single(name);
      if (raw === undefined || raw === '') return undefined;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < min || n > max) fail(name, `A valid integer from ${min} to ${max} is required.`);
      return n;
    };
    const page = int('page', 1, Number.MAX_SAFE_INTEGER);
    const pageSize = int('page_size', 1, 250);
    if (Object.keys(errors).length > 0) throw badRequest(errors);

    const c = await loanContext(s, ctx);
    const has = (l: string[] | undefined, v: string) => !l || l.includes(v);
    const loans = (await s.store.latest<LoanRecord['body']>('loan'))
      .map(loanOf)
      .filter((l) => c.access.canSee(l) && has(lists.organizations, l.organization) && has(lists.market_makers, l.market_maker) && has(lists.assets, l.asset) && has(lists.statuses, l.status))
      .sort((a, b) => b.id - a.id);
    if (page === undefined && pageSize === undefined) {
      ctx.body = await presentLoans(s, loans, c.organizations);
      return;
    }
    const size = pageSize ?? DEFAULT_PAGE_SIZE;
    const p = page ?? 1;
    ctx.body = { count: loans.length, page: p, page_size: size, results: await presentLoans(s, loans.slice((p - 1) * size, p * size), c.organizations) };
  };
}
