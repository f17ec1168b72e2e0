// The loans resource (addendum section 7; docs/loans.md): list, create, read, change a
// draft, and the actions of the state machine. Reading takes a token or an API key with
// `metrics:read`; changing takes a signed-in member of the lender (API keys have no scope
// for it). Each handler reads the caller, calls one read (domain/loans/reads.ts) or command
// (domain/loans/commands.ts), and presents the loans with their valuation and KPI; a
// refusal becomes 404, 403 or 400 (api/http/outcomes.ts).
import type { Context } from 'koa';
import { actOnLoan, changeLoan, CHANGE_MESSAGES, createLoan, type LoanEnv } from '../../../domain/loans/commands.ts';
import type { Loan } from '../../../domain/loans/loan.ts';
import { listLoans, readLoan, valued } from '../../../domain/loans/reads.ts';
import { loanCallerOf, mayLend, type LoanCaller } from '../../../domain/loans/visibility.ts';
import { assetTwap } from '../../../domain/market/prices.ts';
import type { ApiDeps } from '../../deps.ts';
import { allowedIf, authenticate, principalOf } from '../../http/auth.ts';
import { pathId, type BodyOf, type Handlers } from '../../http/contract.ts';
import { listQuery, paged } from '../../http/list-query.ts';
import { valueOf } from '../../http/outcomes.ts';
import { presentLoan } from './present.ts';

const LISTS = ['organizations', 'market_makers', 'assets', 'statuses'] as const;

export function loanHandlers(deps: ApiDeps): Handlers {
  const env: LoanEnv = {
    store: deps.agreements,
    targets: deps.targets,
    ids: deps.ids,
    locks: deps.locks,
    assetTwap: async (asset, from, to) => assetTwap(deps.ch, asset, (await deps.referenceLists.lists()).pairs, from, to, await deps.rolledUp.through()),
  };
  const read = authenticate(deps, { apiKeyScope: 'metrics:read' });
  const write = authenticate(deps);
  const caller = (ctx: Context): Promise<LoanCaller> => loanCallerOf(deps, principalOf(ctx.state).user, deps.now());
  /** Loans as shown: each with its valuation and KPI as of the caller's moment. */
  const present = async (c: LoanCaller, loans: readonly Loan[]) => {
    const src = { ch: deps.ch, targets: deps.targets, pairs: c.lists.pairs, rolledUpTo: await deps.rolledUp.through() };
    return (await valued(src, loans, c.now)).map((v) => presentLoan(v.loan, c.organizations, v.valuation, v.kpi));
  };

  return {
    listLoans: [
      read,
      async (ctx) => {
        const q = listQuery(ctx.state.query, LISTS);
        const c = await caller(ctx);
        ctx.body = await paged(await listLoans(deps.agreements, c, q.lists), q, (rows) => present(c, rows));
      },
    ],
    createLoan: {
      // A caller who may not lend at all is told so whatever its body (403 before 400).
      guard: allowedIf(async (ctx) => mayLend((await caller(ctx)).access), CHANGE_MESSAGES.notLender),
      handle: [
        write,
        async (ctx) => {
          const c = await caller(ctx);
          const loan = valueOf(await createLoan(env, c, ctx.state.body as BodyOf<'createLoan'>));
          ctx.status = 201;
          ctx.body = (await present(c, [loan]))[0];
        },
      ],
    },
    getLoan: [
      read,
      async (ctx) => {
        const c = await caller(ctx);
        ctx.body = (await present(c, [valueOf(await readLoan(deps.agreements, c, pathId(ctx)))]))[0];
      },
    ],
    updateLoan: [
      write,
      async (ctx) => {
        const c = await caller(ctx);
        ctx.body = (await present(c, [valueOf(await changeLoan(env, c, pathId(ctx), ctx.state.body as BodyOf<'updateLoan'>))]))[0];
      },
    ],
    loanAction: [
      write,
      async (ctx) => {
        const c = await caller(ctx);
        ctx.body = (await present(c, [valueOf(await actOnLoan(env, c, pathId(ctx), ctx.state.body as BodyOf<'loanAction'>))]))[0];
      },
    ],
  };
}
