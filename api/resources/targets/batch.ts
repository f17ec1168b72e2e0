// POST /v2/organizations/targets/batch/ (addendum sections 3 and 6): applies a preview's
// `batch` ({delete_ids, create_targets}) all or nothing. Every id and every target is
// checked first; one problem fails the whole batch and changes nothing. The batch is then
// written as one insert (domain/targets/repository.ts), which is whole or absent also when
// the process dies during it. Batches run one at a time, so two cannot both pass the
// one-target-per-key check against the same state.
import type { Context } from 'koa';
import { initialState, type Target, type TargetDefinition } from '../../../domain/targets/repository.ts';
import { targetAccess } from '../../../domain/targets/visibility.ts';
import { principalOf } from '../../http/auth.ts';
import type { BodyOf } from '../../http/contract.ts';
import { badRequest, type FieldErrors } from '../../http/errors.ts';
import { targetDefinitionOf, targetKey, type TargetContext } from './input.ts';
import { presentTarget } from './present.ts';
import type { TargetServices } from './services.ts';

type BatchBody = BodyOf<'applyTargetBatch'>;

export const BATCH_MESSAGES = {
  notFound: (id: number) => `Target ${id} was not found.`,
  notYours: (id: number) => `You may not change target ${id}.`,
  duplicate: (id: number) => `A target with the same organization, asset, exchange, pair, metric and market hours exists (id ${id}); delete it in the same batch.`,
  repeated: 'Another target of this batch has the same organization, asset, exchange, pair, metric and market hours.',
} as const;

export async function targetContext(s: TargetServices, ctx: Context): Promise<TargetContext> {
  const user = principalOf(ctx.state).user;
  const [access, lists] = await Promise.all([targetAccess(s.deps, user), s.deps.referenceLists.lists()]);
  return { access, organizations: new Map(lists.organizations.map((o) => [o.slug, o])), lists };
}

/**
 * Checks a batch against the targets as they are; the targets to create (with their
 * definitions) or the errors, shaped as the body: `delete_ids` messages and one object per
 * item of `create_targets`.
 */
export function batchOf(body: BatchBody, c: TargetContext, existing: readonly Target[]): { deleteIds: number[]; create: TargetDefinition[] } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const deleteIds = [...new Set(body.delete_ids ?? [])];
  const rawTargets = body.create_targets ?? [];

  const byId = new Map(existing.map((t) => [t.id, t]));
  const idErrors: string[] = [];
  for (const id of deleteIds) {
    const t = byId.get(id);
    if (!t || !c.access.canSee(t)) idErrors.push(BATCH_MESSAGES.notFound(id));
    else if (!c.access.canManage(t)) idErrors.push(BATCH_MESSAGES.notYours(id));
  }
  if (idErrors.length > 0) errors.delete_ids = idErrors;

  const deleted = new Set(deleteIds);
  const live = new Map(existing.filter((t) => !deleted.has(t.id)).map((t) => [targetKey(t), t.id]));
  const seen = new Set<string>();
  const create: TargetDefinition[] = [];
  const itemErrors: FieldErrors[] = [];
  let bad = false;
  for (const raw of rawTargets) {
    const r = targetDefinitionOf(raw, c);
    if (r.errors) {
      itemErrors.push(r.errors);
      bad = true;
      continue;
    }
    const key = targetKey(r.target);
    const clash = live.get(key);
    if (clash !== undefined) {
      itemErrors.push({ non_field_errors: [BATCH_MESSAGES.duplicate(clash)] });
      bad = true;
    } else if (seen.has(key)) {
      itemErrors.push({ non_field_errors: [BATCH_MESSAGES.repeated] });
      bad = true;
    } else {
      itemErrors.push({});
      create.push(r.target);
    }
    seen.add(key);
  }
  if (bad) errors.create_targets = itemErrors;
  return Object.keys(errors).length > 0 ? { errors } : { deleteIds, create };
}

export function applyBatch(s: TargetServices) {
  return async (ctx: Context) => {
    const body = ctx.state.body as BatchBody;
    const user = principalOf(ctx.state).user;
    const c = await targetContext(s, ctx);
    const created = await s.deps.locks.with('targets:batch', async () => {
      const existing = await s.targets.all();
      const checked = batchOf(body, c, existing);
      if ('errors' in checked) throw badRequest(checked.errors);
      const floor = await s.targets.maxId();
      const create: (TargetDefinition & { id: number })[] = [];
      for (const t of checked.create) create.push({ ...t, id: await s.deps.ids.next('targets', floor) });
      const at = s.deps.now();
      await s.targets.applyBatch({ deleteIds: checked.deleteIds, create, by: user.id, at });
      return create.map((t): Target => ({ ...t, created_at: at, ...initialState(t, at) }));
    });
    ctx.status = 201;
    ctx.body = created.map((t) => presentTarget(t, c.organizations));
  };
}
