// GET /v2/organizations/loans/ (addendum section 7): the loans the caller may see, filtered
// by `organizations` (lenders), `market_makers`, `assets` and `statuses`; a plain array, or
// `{count, page, page_size, results}` when `page` or `page_size` is given (as the targets
// list). Newest first.
import type { Context } from 'koa';
import { loanOf, type LoanRecord } from '../../../domain/loans/loan.ts';
import { listQuery, paged } from '../../http/list-query.ts';
import { loanContext, presentLoans, type LoanServices } from './routes.ts';

const LISTS = ['organizations', 'market_makers', 'assets', 'statuses'] as const;

export function listLoans(s: LoanServices) {
  return async (ctx: Context) => {
    const q = listQuery(ctx.state.query, LISTS);
    const c = await loanContext(s, ctx);
    const has = (l: string[] | undefined, v: string) => !l || l.includes(v);
    const loans = (await s.store.latest<LoanRecord['body']>('loan'))
      .map(loanOf)
      .filter((l) => c.access.canSee(l) && has(q.lists.organizations, l.organization) && has(q.lists.market_makers, l.market_maker) && has(q.lists.assets, l.asset) && has(q.lists.statuses, l.status))
      .sort((a, b) => b.id - a.id);
    ctx.body = await paged(loans, q, (rows) => presentLoans(s, rows, c.organizations));
  };
}
