// The RFQ resource (addendum section 8; docs/rfq.md): RFQs, their actions, the proposals
// with the comparison view, and the award. Reading takes a token or an API key with
// `metrics:read`; changing takes a signed-in user (API keys have no scope for it). Each
// handler reads the caller, calls one read (domain/rfq/reads.ts) or command
// (domain/rfq/commands.ts), and presents its answer; a refusal becomes 404, 403 or 400
// (api/http/outcomes.ts).
import crypto from 'node:crypto';
import type { Context } from 'koa';
import { mayRequestProposals, rfqCallerOf, type RfqCaller } from '../../../domain/rfq/access.ts';
import { RFQ_STATE_MESSAGES } from '../../../domain/rfq/rfq.ts';
import { actOnRfq, awardRfq, changeProposal, changeRfq, createRfq, propose, type RfqEnv } from '../../../domain/rfq/commands.ts';
import { listProposals, listRfqs, proposalVersions, readProposal, readRfq, rfqVersions } from '../../../domain/rfq/reads.ts';
import { Faults } from '../../../lib/faults.ts';
import type { ApiDeps } from '../../deps.ts';
import { allowedIf, authenticate, principalOf } from '../../http/auth.ts';
import { pathId, type BodyOf, type Handlers } from '../../http/contract.ts';
import { listQuery, paged } from '../../http/list-query.ts';
import { valueOf } from '../../http/outcomes.ts';
import { compareProposals } from './comparison.ts';
import { presentAward, presentProposal, presentRfq } from './present.ts';

export function rfqHandlers(deps: ApiDeps): Handlers {
  const faults = new Faults(deps.config.faults ?? []);
  const env: RfqEnv = { store: deps.agreements, targets: deps.targets, ids: deps.ids, locks: deps.locks, betweenWrites: () => faults.hit('award-gap') };
  const store = deps.agreements;
  const read = authenticate(deps, { apiKeyScope: 'metrics:read' });
  const write = authenticate(deps);
  const caller = (ctx: Context): Promise<RfqCaller> => rfqCallerOf(deps, principalOf(ctx.state).user, deps.now());
  /** The body of an operation, as the contract checked it (api/openapi.yaml). */
  const bodyOf = <Op extends 'createRfq' | 'updateRfq' | 'rfqAction' | 'createProposal' | 'updateProposal' | 'awardRfq'>(ctx: Context, _op: Op) => ctx.state.body as BodyOf<Op>;

  return {
    listRfqs: [
      read,
      async (ctx) => {
        const q = listQuery(ctx.state.query, ['organizations', 'assets', 'statuses'] as const);
        const c = await caller(ctx);
        const rows = await listRfqs(store, c, q.lists);
        ctx.body = await paged(rows, q, async (page) => page.map((r) => presentRfq(r, c.organizations, c.now)));
      },
    ],
    createRfq: {
      // A caller who may not request proposals at all is told so whatever its body (403 before 400).
      guard: allowedIf(async (ctx) => mayRequestProposals((await caller(ctx)).access), RFQ_STATE_MESSAGES.noProjects),
      handle: [
        write,
        async (ctx) => {
          const c = await caller(ctx);
          const rfq = valueOf(await createRfq(env, c, bodyOf(ctx, 'createRfq')));
          ctx.status = 201;
          ctx.body = presentRfq(rfq, c.organizations, c.now);
        },
      ],
    },
    getRfq: [
      read,
      async (ctx) => {
        const c = await caller(ctx);
        ctx.body = presentRfq(valueOf(await readRfq(store, c, pathId(ctx))), c.organizations, c.now);
      },
    ],
    updateRfq: [
      write,
      async (ctx) => {
        const c = await caller(ctx);
        ctx.body = presentRfq(valueOf(await changeRfq(env, c, pathId(ctx), bodyOf(ctx, 'updateRfq'))), c.organizations, c.now);
      },
    ],
    listRfqVersions: [
      read,
      async (ctx) => {
        const c = await caller(ctx);
        ctx.body = valueOf(await rfqVersions(store, c, pathId(ctx))).map((v) => presentRfq(v, c.organizations, c.now));
      },
    ],
    rfqAction: [
      write,
      async (ctx) => {
        const c = await caller(ctx);
        ctx.body = presentRfq(valueOf(await actOnRfq(env, c, pathId(ctx), bodyOf(ctx, 'rfqAction').action)), c.organizations, c.now);
      },
    ],
    listProposals: [
      read,
      async (ctx) => {
        const q = listQuery(ctx.state.query, ['statuses', 'market_makers'] as const);
        const c = await caller(ctx);
        const { rfq, proposals } = valueOf(await listProposals(store, c, pathId(ctx), q.lists));
        ctx.body = await paged(proposals, q, (page) => compareProposals(deps, rfq, page, c.organizations, c.now));
      },
    ],
    createProposal: [
      write,
      async (ctx) => {
        const c = await caller(ctx);
        const { rfq, proposal } = valueOf(await propose(env, c, pathId(ctx), bodyOf(ctx, 'createProposal')));
        ctx.status = 201;
        ctx.body = (await compareProposals(deps, rfq, [proposal], c.organizations, c.now))[0];
      },
    ],
    getProposal: [
      read,
      async (ctx) => {
        const c = await caller(ctx);
        const { rfq, proposal } = valueOf(await readProposal(store, c, pathId(ctx), pathId(ctx, 'pid')));
        ctx.body = (await compareProposals(deps, rfq, [proposal], c.organizations, c.now))[0];
      },
    ],
    updateProposal: [
      write,
      async (ctx) => {
        const c = await caller(ctx);
        const { rfq, proposal } = valueOf(await changeProposal(env, c, pathId(ctx), pathId(ctx, 'pid'), bodyOf(ctx, 'updateProposal')));
        ctx.body = (await compareProposals(deps, rfq, [proposal], c.organizations, c.now))[0];
      },
    ],
    listProposalVersions: [
      read,
      async (ctx) => {
        const c = await caller(ctx);
        ctx.body = valueOf(await proposalVersions(store, c, pathId(ctx), pathId(ctx, 'pid'))).map((p) => presentProposal(p, c.organizations));
      },
    ],
    awardRfq: [
      write,
      async (ctx) => {
        const c = await caller(ctx);
        const award = valueOf(await awardRfq(env, c, pathId(ctx), bodyOf(ctx, 'awardRfq').proposal, crypto.randomUUID()));
        ctx.status = 201;
        ctx.body = presentAward(award, c.organizations, c.now);
      },
    ],
  };
}
