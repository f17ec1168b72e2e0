// The RFQ resource (addendum section 8; docs/rfq.md): RFQs, their actions, the proposals
// with the comparison view, and the award. Reading takes a token or an API key with
// `metrics:read`; changing takes a signed-in user (API keys have no scope for it). What
// the caller may not see answers 404; what it sees but may not change, 403; an action the
// state does not allow, 400 `{message}` naming the state.
//
// Every request first applies the moves the clock has made due (an RFQ past its deadline
// closed, a proposal past valid_until expired: domain/rfq/deadlines.ts), and every change
// runs under the agreements lock, reading the records again inside it, so a check and its
// write see the same versions.
import { pathId, type BodyOf, type Handlers } from '../../http/contract.ts';
import crypto from 'node:crypto';
import type { Context } from 'koa';
import { AGREEMENTS_LOCK, AgreementStore } from '../../../domain/agreements/store.ts';
import type { Organization, ReferenceLists } from '../../../domain/reference/repository.ts';
import { rfqAccess, type RfqAccess } from '../../../domain/rfq/access.ts';
import { writeAward } from '../../../domain/rfq/award.ts';
import { applyDue, applyDueLocked } from '../../../domain/rfq/deadlines.ts';
import {
  acceptsProposals,
  LIVE_PROPOSAL,
  newProposal,
  newRfq,
  nextProposal,
  nextRfq,
  proposalOf,
  proposalRecord,
  proposalsUnsealed,
  PROPOSAL_ACTION_FROM,
  PROPOSAL_ACTION_RFQ,
  PROPOSAL_ACTION_TO,
  RFQ_ACTION_FROM,
  RFQ_ACTION_TO,
  rfqOf,
  rfqRecord,
  type Proposal,
  type ProposalAction,
  type ProposalBody,
  type Rfq,
  type RfqAction,
  type RfqBody,
} from '../../../domain/rfq/rfq.ts';
import { TargetRepository } from '../../../domain/targets/repository.ts';
import { Faults } from '../../../lib/faults.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate, principalOf } from '../../http/auth.ts';
import { badRequest, forbidden, messageError, notFound } from '../../http/errors.ts';
import { compareProposals } from './comparison.ts';
import { proposalTermsOf, rfqTermsOf, type RfqContext } from './input.ts';
import { presentProposal, presentRfq } from './present.ts';
import { listQuery, paged } from '../../http/list-query.ts';

export interface RfqServices {
  deps: ApiDeps;
  store: AgreementStore;
  targets: TargetRepository;
  faults: Faults;
}

export const RFQ_STATE_MESSAGES = {
  rfqAction: (action: RfqAction, q: Rfq) => `Cannot ${action} RFQ ${q.id}: it is ${q.status}.`,
  patch: (q: Rfq) => `RFQ ${q.id} is ${q.status}: only a draft can be changed.`,
  openPast: (q: Rfq) => `Cannot open RFQ ${q.id}: its deadline has passed; set a later one first.`,
  notAccepting: (q: Rfq) => `RFQ ${q.id} is ${q.status === 'open' ? 'past its deadline' : q.status}: proposals are not accepted.`,
  live: (mm: string, p: Proposal) => `${mm} already has proposal ${p.id} on this RFQ (${p.status}): revise it instead.`,
  proposalAction: (action: ProposalAction, p: Proposal, q: Rfq) =>
    !PROPOSAL_ACTION_FROM[action].includes(p.status)
      ? `Cannot ${action} proposal ${p.id}: it is ${p.status}.`
      : q.status === 'open' && action === 'revise'
        ? `Cannot revise proposal ${p.id}: RFQ ${q.id} is past its deadline.`
        : `Cannot ${action} proposal ${p.id}: RFQ ${q.id} is ${q.status}.`,
  award: (q: Rfq) => `Cannot award RFQ ${q.id}: it is ${q.status}.`,
  awardSealed: (q: Rfq) => `Cannot award RFQ ${q.id}: it is sealed until its deadline (${new Date(q.deadline).toISOString()}).`,
  awardProposal: (p: Proposal) => `Cannot award proposal ${p.id}: it is ${p.status}.`,
  notOfRfq: (id: number) => `Proposal ${id} is not a proposal of this RFQ.`,
  sealed: (q: Rfq) => `RFQ ${q.id} is sealed: its proposals are shown after the deadline (${new Date(q.deadline).toISOString()}).`,
  otherProject: (q: Rfq) => `Must be an asset of ${q.organization}, the project of this RFQ.`,
  noProjects: 'Only members of a project may request proposals.',
  notProposer: 'Only an invited market maker may propose.',
  marketMaker: (s: string) => `"${s}" is not an invited market maker you may propose for.`,
  chooseMarketMaker: 'Name the market maker that proposes: you may propose for more than one.',
} as const;

export function rfqHandlers(deps: ApiDeps): Handlers {
  const s: RfqServices = { deps, store: new AgreementStore(deps.ch), targets: new TargetRepository(deps.ch), faults: new Faults(deps.config.faults ?? []) };
  const read = authenticate(deps, { apiKeyScope: 'metrics:read' });
  const write = authenticate(deps);
  return {
    listRfqs: [read, listRfqs(s)],
    createRfq: [write, createRfq(s)],
    getRfq: [read, readRfq(s)],
    updateRfq: [write, patchRfq(s)],
    listRfqVersions: [read, rfqVersions(s)],
    rfqAction: [write, rfqAction(s)],
    listProposals: [read, listProposals(s)],
    createProposal: [write, createProposal(s)],
    getProposal: [read, readProposal(s)],
    updateProposal: [write, changeProposal(s)],
    listProposalVersions: [read, proposalVersions(s)],
    awardRfq: [write, award(s)],
  };
}

interface Caller {
  user: number;
  access: RfqAccess;
  organizations: Map<string, Organization>;
  lists: ReferenceLists;
  now: number;
}

async function caller(s: RfqServices, ctx: Context): Promise<Caller> {
  const user = principalOf(ctx.state).user;
  const [access, lists] = await Promise.all([rfqAccess(s.deps, user), s.deps.referenceLists.lists()]);
  const now = s.deps.now();
  // The clock's moves first: what follows sees the RFQ closed at its deadline.
  await applyDue({ store: s.store, locks: s.deps.locks }, now);
  return { user: user.id, access, organizations: new Map(lists.organizations.map((o) => [o.slug, o])), lists, now };
}

/** The body of an operation, as the contract checked it (api/openapi.yaml). */
const bodyOf = <Op extends 'createRfq' | 'updateRfq' | 'rfqAction' | 'createProposal' | 'updateProposal' | 'awardRfq'>(ctx: Context, _op: Op) => ctx.state.body as BodyOf<Op>;

async function loadRfq(s: RfqServices, id: number | undefined): Promise<Rfq | undefined> {
  if (id === undefined) return undefined;
  const r = await s.store.one<RfqBody>('rfq', id);
  return r && rfqOf(r);
}

async function loadProposals(s: RfqServices, rfq: number): Promise<Proposal[]> {
  return (await s.store.latest<ProposalBody>('proposal', { parent: rfq })).map(proposalOf);
}

/** The path's RFQ if the caller may see it; 404 otherwise (also for an unknown id). */
async function visibleRfq(s: RfqServices, ctx: Context, c: Caller): Promise<Rfq> {
  const q = await loadRfq(s, pathId(ctx));
  if (!q || !c.access.canSeeRfq(q)) throw notFound();
  return q;
}

/** Runs a change under the agreements lock, with the due moves applied and the path's RFQ read again inside it. */
async function locked<T>(s: RfqServices, ctx: Context, c: Caller, fn: (q: Rfq) => Promise<T>): Promise<T> {
  return s.deps.locks.with(AGREEMENTS_LOCK, async () => {
    await applyDueLocked(s.store, c.now);
    return fn(await visibleRfq(s, ctx, c));
  });
}

function rfqContext(c: Caller): RfqContext {
  const manageable = new Set(c.lists.assets.filter((a) => c.organizations.get(a.owner)?.kind === 'project' && c.access.manages({ organization: a.owner })).map((a) => a.symbol));
  return { lists: c.lists, organizations: c.organizations, manageableAssets: manageable, now: c.now };
}

function listRfqs(s: RfqServices) {
  return async (ctx: Context) => {
    const q = listQuery(ctx.state.query, ['organizations', 'assets', 'statuses'] as const);
    const c = await caller(s, ctx);
    const has = (l: string[] | undefined, v: string) => !l || l.includes(v);
    const rows = (await s.store.latest<RfqBody>('rfq'))
      .map(rfqOf)
      .filter((r) => c.access.canSeeRfq(r) && has(q.lists.organizations, r.organization) && has(q.lists.assets, r.asset) && has(q.lists.statuses, r.status))
      .sort((a, b) => b.id - a.id);
    ctx.body = await paged(rows, q, async (page) => page.map((r) => presentRfq(r, c.organizations, c.now)));
  };
}

function createRfq(s: RfqServices) {
  return async (ctx: Context) => {
    const body = bodyOf(ctx, 'createRfq');
    const c = await caller(s, ctx);
    if (!c.access.staff && c.access.projects.size === 0) throw forbidden(RFQ_STATE_MESSAGES.noProjects);
    const checked = rfqTermsOf(body, rfqContext(c));
    if ('errors' in checked) throw badRequest(checked.errors);
    const owner = c.lists.assets.find((a) => a.symbol === checked.terms.asset)!.owner;
    const rfq = await s.deps.locks.with(AGREEMENTS_LOCK, async () => {
      const q = newRfq(await s.deps.ids.next('rfqs', await s.store.maxId('rfq')), owner, checked.terms, c.now, c.user);
      await s.store.write([rfqRecord(q, { at: c.now, by: c.user })]);
      return q;
    });
    ctx.status = 201;
    ctx.body = presentRfq(rfq, c.organizations, c.now);
  };
}

function readRfq(s: RfqServices) {
  return async (ctx: Context) => {
    const c = await caller(s, ctx);
    ctx.body = presentRfq(await visibleRfq(s, ctx, c), c.organizations, c.now);
  };
}

function rfqVersions(s: RfqServices) {
  return async (ctx: Context) => {
    const c = await caller(s, ctx);
    const q = await visibleRfq(s, ctx, c);
    const versions = (await s.store.versions<RfqBody>('rfq', q.id)).map(rfqOf);
    // A market maker never saw the drafts: their versions stay hidden from it.
    ctx.body = versions.filter((v) => c.access.manages(v) || v.status !== 'draft').map((v) => presentRfq(v, c.organizations, c.now));
  };
}

function patchRfq(s: RfqServices) {
  return async (ctx: Context) => {
    const body = bodyOf(ctx, 'updateRfq');
    const c = await caller(s, ctx);
    const rfq = await locked(s, ctx, c, async (q) => {
      if (!c.access.manages(q)) throw forbidden();
      if (q.status !== 'draft') throw messageError(RFQ_STATE_MESSAGES.patch(q));
      const { id, organization, status, version, awarded_proposal, loan, history, created_at, ...terms } = q;
      const checked = rfqTermsOf(body, rfqContext(c), terms);
      if ('errors' in checked) throw badRequest(checked.errors);
      // The asset decides the project: a draft keeps its project.
      if (c.lists.assets.find((a) => a.symbol === checked.terms.asset)?.owner !== q.organization) throw badRequest({ asset: [RFQ_STATE_MESSAGES.otherProject(q)] });
      const next = nextRfq(q, 'draft', c.now, c.user, checked.terms);
      await s.store.write([rfqRecord(next, { at: c.now, by: c.user })]);
      return next;
    });
    ctx.body = presentRfq(rfq, c.organizations, c.now);
  };
}

function rfqAction(s: RfqServices) {
  return async (ctx: Context) => {
    const a: RfqAction = bodyOf(ctx, 'rfqAction').action;
    const c = await caller(s, ctx);
    const rfq = await locked(s, ctx, c, async (q) => {
      if (!c.access.manages(q)) throw forbidden();
      if (!RFQ_ACTION_FROM[a].includes(q.status)) throw messageError(RFQ_STATE_MESSAGES.rfqAction(a, q));
      if (a === 'open' && q.deadline <= c.now) throw messageError(RFQ_STATE_MESSAGES.openPast(q));
      const next = nextRfq(q, RFQ_ACTION_TO[a], c.now, c.user);
      await s.store.write([rfqRecord(next, { at: c.now, by: c.user })]);
      return next;
    });
    ctx.body = presentRfq(rfq, c.organizations, c.now);
  };
}

/** The proposals of an RFQ the caller may see; 403 for the project of a sealed RFQ before its deadline. */
function visibleProposals(c: Caller, q: Rfq, all: readonly Proposal[]): Proposal[] {
  if (c.access.staff) return [...all];
  const own = all.filter((p) => c.access.makers.has(p.market_maker));
  if (c.access.projects.has(q.organization)) {
    if (!proposalsUnsealed(q, c.now)) {
      if (own.length > 0) return own;
      throw forbidden(RFQ_STATE_MESSAGES.sealed(q));
    }
    return [...all];
  }
  return own;
}

function listProposals(s: RfqServices) {
  return async (ctx: Context) => {
    const lq = listQuery(ctx.state.query, ['statuses', 'market_makers'] as const);
    const c = await caller(s, ctx);
    const q = await visibleRfq(s, ctx, c);
    const has = (l: string[] | undefined, v: string) => !l || l.includes(v);
    const rows = visibleProposals(c, q, await loadProposals(s, q.id))
      .filter((p) => has(lq.lists.statuses, p.status) && has(lq.lists.market_makers, p.market_maker))
      .sort((a, b) => a.id - b.id);
    ctx.body = await paged(rows, lq, (page) => compareProposals(s, q, page, c.organizations, c.now));
  };
}

/** The path's proposal if the caller may see it (and its RFQ); 404 otherwise. */
async function visibleProposal(s: RfqServices, ctx: Context, c: Caller, q: Rfq): Promise<Proposal> {
  const r = await s.store.one<ProposalBody>('proposal', pathId(ctx, 'pid'));
  const p = r && proposalOf(r);
  if (!p || p.rfq !== q.id || !c.access.canSeeProposal(q, p, c.now)) throw notFound();
  return p;
}

function readProposal(s: RfqServices) {
  return async (ctx: Context) => {
    const c = await caller(s, ctx);
    const q = await visibleRfq(s, ctx, c);
    const p = await visibleProposal(s, ctx, c, q);
    ctx.body = (await compareProposals(s, q, [p], c.organizations, c.now))[0];
  };
}

function proposalVersions(s: RfqServices) {
  return async (ctx: Context) => {
    const c = await caller(s, ctx);
    const q = await visibleRfq(s, ctx, c);
    const p = await visibleProposal(s, ctx, c, q);
    ctx.body = (await s.store.versions<ProposalBody>('proposal', p.id)).map((r) => presentProposal(proposalOf(r), c.organizations));
  };
}

function createProposal(s: RfqServices) {
  return async (ctx: Context) => {
    const body = bodyOf(ctx, 'createProposal');
    const c = await caller(s, ctx);
    const proposal = await locked(s, ctx, c, async (q) => {
      const mine = c.access.staff ? [...c.organizations.values()].filter((o) => o.kind === 'market_maker' && (q.invited.length === 0 || q.invited.includes(o.slug))).map((o) => o.slug) : c.access.proposers(q);
      if (mine.length === 0) throw forbidden(RFQ_STATE_MESSAGES.notProposer);
      let maker: string;
      if (body.market_maker !== undefined) {
        if (!mine.includes(body.market_maker)) throw badRequest({ market_maker: [RFQ_STATE_MESSAGES.marketMaker(body.market_maker)] });
        maker = body.market_maker;
      } else if (mine.length === 1) maker = mine[0]!;
      else throw badRequest({ market_maker: [RFQ_STATE_MESSAGES.chooseMarketMaker] });
      if (!acceptsProposals(q, c.now)) throw messageError(RFQ_STATE_MESSAGES.notAccepting(q));
      const live = (await loadProposals(s, q.id)).find((p) => p.market_maker === maker && LIVE_PROPOSAL.includes(p.status));
      if (live) throw messageError(RFQ_STATE_MESSAGES.live(maker, live));
      const checked = proposalTermsOf(body, q, c.now);
      if ('errors' in checked) throw badRequest(checked.errors);
      const p = newProposal(await s.deps.ids.next('proposals', await s.store.maxId('proposal')), q, maker, checked.terms, c.now, c.user);
      await s.store.write([proposalRecord(p, { at: c.now, by: c.user })]);
      return { q, p };
    });
    ctx.status = 201;
    ctx.body = (await compareProposals(s, proposal.q, [proposal.p], c.organizations, c.now))[0];
  };
}

function changeProposal(s: RfqServices) {
  return async (ctx: Context) => {
    const body = bodyOf(ctx, 'updateProposal');
    const a: ProposalAction = body.action;
    const c = await caller(s, ctx);
    const out = await locked(s, ctx, c, async (q) => {
      const p = await visibleProposal(s, ctx, c, q);
      const byMaker = a === 'revise' || a === 'withdraw';
      const allowed = c.access.staff || (byMaker ? c.access.makers.has(p.market_maker) : c.access.manages(q));
      if (!allowed) throw forbidden();
      const rfqOk = PROPOSAL_ACTION_RFQ[a].includes(q.status) && (a !== 'revise' || acceptsProposals(q, c.now));
      if (!PROPOSAL_ACTION_FROM[a].includes(p.status) || !rfqOk) throw messageError(RFQ_STATE_MESSAGES.proposalAction(a, p, q));
      let next: Proposal;
      if (a === 'revise') {
        const { action: _, ...fields } = body;
        const { id, rfq, organization, market_maker, asset, status, version, history, created_at, ...terms } = p;
        const checked = proposalTermsOf(fields, q, c.now, terms);
        if ('errors' in checked) throw badRequest(checked.errors);
        next = nextProposal(p, PROPOSAL_ACTION_TO[a], c.now, c.user, checked.terms, true);
      } else next = nextProposal(p, PROPOSAL_ACTION_TO[a], c.now, c.user);
      await s.store.write([proposalRecord(next, { at: c.now, by: c.user })]);
      return { q, p: next };
    });
    ctx.body = (await compareProposals(s, out.q, [out.p], c.organizations, c.now))[0];
  };
}

function award(s: RfqServices) {
  return async (ctx: Context) => {
    const pid = bodyOf(ctx, 'awardRfq').proposal;
    const c = await caller(s, ctx);
    const result = await locked(s, ctx, c, async (q) => {
      if (!c.access.manages(q)) throw forbidden();
      if (q.status !== 'open' && q.status !== 'closed') throw messageError(RFQ_STATE_MESSAGES.award(q));
      if (!proposalsUnsealed(q, c.now)) throw messageError(RFQ_STATE_MESSAGES.awardSealed(q));
      const all = await loadProposals(s, q.id);
      const p = all.find((x) => x.id === pid);
      if (!p) throw badRequest({ proposal: [RFQ_STATE_MESSAGES.notOfRfq(pid)] });
      if (!LIVE_PROPOSAL.includes(p.status)) throw messageError(RFQ_STATE_MESSAGES.awardProposal(p));
      return writeAward(
        { store: s.store, targets: s.targets, ids: s.deps.ids, locks: s.deps.locks, betweenWrites: () => s.faults.hit('award-gap') },
        q,
        p,
        all,
        c.now,
        c.user,
        crypto.randomUUID(),
      );
    });
    ctx.status = 201;
    ctx.body = {
      rfq: presentRfq(result.rfq, c.organizations, c.now),
      proposal: presentProposal(result.proposal, c.organizations),
      rejected: result.rejected.map((p) => p.id),
      loan: { id: result.loan, status: 'draft' },
      targets: result.targets.map((t) => ({ id: t.id, organization: t.organization, asset: t.asset, exchange: t.exchange, pair: t.pair, metric: t.metric, threshold: t.threshold, direction: t.direction, market_hours: t.market_hours, active: t.active })),
      skipped_targets: result.skipped.map((t) => ({ existing_id: t.existing_id, exchange: t.exchange, pair: t.pair, metric: t.metric, market_hours: t.market_hours })),
    };
  };
}
