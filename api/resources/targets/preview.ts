// POST /v2/organizations/targets/preview/ (specification 4.8, addendum section 6): what
// saving the complete set of targets for the given scopes would add, modify and remove,
// and the batch that does it. Nothing is saved. Accepts JSON, urlencoded and multipart
// bodies (in a form, `scopes` and `targets` are JSON texts).
import type { Context } from 'koa';
import { defaultDirection, isTargetMetric, targetSessionHours } from '../../../domain/targets/facts.ts';
import { defaultTarget, defaultThreshold } from '../../../domain/targets/defaults.ts';
import { definitionOf, type Target, type TargetDefinition } from '../../../domain/targets/repository.ts';
import { scaledThreshold } from '../../../domain/targets/scaling.ts';
import { scopeOf } from '../../../domain/reference/visibility.ts';
import type { BodyOf } from '../../http/contract.ts';
import { badRequest, forbidden, type FieldErrors } from '../../http/errors.ts';
import { BATCH_MESSAGES, targetContext } from './batch.ts';
import { targetDefinitionOf, targetKey, TARGET_MESSAGES } from './input.ts';
import type { TargetServices } from './services.ts';

/** Fields a change compares (and lists in `changed_fields` when they differ). */
const COMPARED = ['threshold', 'direction', 'active', 'telegram_notifications', 'scaling_mode', 'scaling_enabled', 'scaling_source', 'scaling_reference_price'] as const;


type PreviewShape = ReturnType<typeof previewShape>;

/** A target as the preview shows it (specification 2.4). */
function previewShape(t: TargetDefinition & { id: number | null; display_threshold: number }) {
  return {
    id: t.id,
    type: t.type,
    organization: t.organization,
    asset: t.asset,
    exchange: t.exchange,
    pair: t.pair,
    metric: t.metric,
    threshold: t.threshold,
    display_threshold: t.display_threshold,
    direction: t.direction,
    active: t.active,
    telegram_notifications: t.telegram_notifications,
    market_hours: t.market_hours,
    scaling: { mode: t.scaling_mode, enabled: t.scaling_enabled, scaling_source: t.scaling_source, reference_price: t.scaling_reference_price },
  };
}

/** The form of a target to create (specification 2.4, preview `batch.create_targets[]`): its whole definition, so saving the batch keeps it as previewed. */
const toCreate = (t: TargetDefinition) => definitionOf(t);

export function previewTargets(s: TargetServices) {
  return async (ctx: Context) => {
    // Its shape checked by the contract (a form's `scopes` and `targets` are JSON texts).
    const body = ctx.state.body as BodyOf<'previewTargets'>;
    const applyScaling = body.apply_scaling === true;
    const c = await targetContext(s, ctx);
    // The scopes: each an organization and asset the caller manages targets of (403 for an
    // organization it does not, as for every change), and metrics of the organization's type.
    const scopeErrors: FieldErrors[] = [];
    const inScope: { organization: string; asset: string; metrics: Set<string> | undefined }[] = [];
    for (const x of body.scopes) {
      const e: FieldErrors = {};
      const org = c.organizations.get(x.organization);
      const type = org?.kind === 'market_maker' ? 'mm' : 'gb';
      const manageable = org ? scopeOf(org, c.lists).assets.filter((a) => c.access.canManage({ type, organization: org.slug, asset: a.symbol })) : [];
      if (manageable.length === 0) throw forbidden(TARGET_MESSAGES.organization(x.organization));
      if (!manageable.some((a) => a.symbol === x.asset)) e.asset = [TARGET_MESSAGES.asset(x.asset)];
      const wrong = (x.metrics ?? []).filter((m) => !isTargetMetric(type, m));
      if (wrong.length > 0) e.metrics = wrong.map((m) => TARGET_MESSAGES.metric(m, type));
      scopeErrors.push(e);
      if (Object.keys(e).length === 0) inScope.push({ organization: org!.slug, asset: x.asset, metrics: x.metrics && x.metrics.length > 0 ? new Set(x.metrics) : undefined });
    }
    if (scopeErrors.some((e) => Object.keys(e).length > 0)) throw badRequest({ scopes: scopeErrors });
    const within = (t: { organization: string; asset: string; metric: string }) =>
      inScope.some((sc) => sc.organization === t.organization && sc.asset === t.asset && (!sc.metrics || sc.metrics.has(t.metric)));

    // The posted targets, each checked and within a scope; fields not given take the
    // existing target's value, else the default (used_default_fallback).
    const existing = (await s.targets.all()).filter((t) => c.access.canSee(t) && within(t));
    const byKey = new Map(existing.map((t) => [targetKey(t), t]));
    const targetErrors: FieldErrors[] = [];
    const after: { target: TargetDefinition; fallback: boolean }[] = [];
    // One target per key, as the batch that saves the preview holds it.
    const posted = new Set<string>();
    for (const raw of body.targets ?? []) {
      const x = { ...raw };
      const fallback = x.threshold === undefined;
      if (fallback) x.threshold = defaultThreshold(x.metric);
      const r = targetDefinitionOf(x, c);
      if (r.errors) {
        targetErrors.push(r.errors);
        continue;
      }
      if (!within(r.target)) {
        targetErrors.push({ non_field_errors: ['This target is outside every scope of the preview.'] });
        continue;
      }
      const key = targetKey(r.target);
      if (posted.has(key)) {
        targetErrors.push({ non_field_errors: [BATCH_MESSAGES.repeated] });
        continue;
      }
      posted.add(key);
      const before = byKey.get(key);
      // Fields the posted target leaves out keep the existing target's values.
      if (before) {
        for (const f of ['direction', 'active', 'telegram_notifications', 'scaling_enabled', 'scaling_mode', 'scaling_source'] as const) if (x[f] === undefined) (r.target as unknown as Record<string, unknown>)[f] = before[f];
        if (x.scaling_reference_price === undefined && r.target.scaling_reference_price === 0) r.target.scaling_reference_price = before.scaling_reference_price;
      }
      if (x.direction === undefined && !before) r.target.direction = defaultDirection(r.target.metric);
      if (applyScaling && !r.target.scaling_enabled && r.target.scaling_reference_price > 0) {
        r.target.scaling_enabled = true;
        r.target.scaling_mode = 'price';
      }
      targetErrors.push({});
      after.push({ target: r.target, fallback });
    }
    if (targetErrors.some((e) => Object.keys(e).length > 0)) throw badRequest({ targets: targetErrors });

    const shown = (t: TargetDefinition & { id?: number }, display: number): PreviewShape => previewShape({ ...t, id: t.id ?? null, display_threshold: display });
    const changes: Record<string, unknown>[] = [];
    const deleteIds: number[] = [];
    const create: ReturnType<typeof toCreate>[] = [];
    const postedKeys = new Set<string>();
    let added = 0;
    let modified = 0;
    for (const { target, fallback } of after) {
      const key = targetKey(target);
      if (postedKeys.has(key)) continue;
      postedKeys.add(key);
      const before = byKey.get(key);
      if (!before) {
        added++;
        changes.push({ action: 'added', existing_id: null, before: null, after: shown(target, target.threshold), changed_fields: [], used_default_fallback: fallback });
        create.push(toCreate(target));
        continue;
      }
      const changed = COMPARED.filter((f) => before[f] !== target[f]);
      if (changed.length === 0) continue;
      modified++;
      changes.push({
        action: 'modified',
        existing_id: before.id,
        before: shown(before, before.effective_threshold),
        after: shown(target, scaledThreshold(target.threshold, before.scaling_factor)),
        changed_fields: changed,
        used_default_fallback: fallback,
      });
      deleteIds.push(before.id);
      create.push(toCreate(target));
    }
    let removed = 0;
    for (const t of existing) {
      if (postedKeys.has(targetKey(t))) continue;
      removed++;
      changes.push({ action: 'removed', existing_id: t.id, before: shown(t, t.effective_threshold), after: null, changed_fields: [], used_default_fallback: false });
      deleteIds.push(t.id);
    }

    // What the organization starts from: per scope, each covered pair and metric asked,
    // the existing target or a default one.
    const prefill: PreviewShape[] = [];
    for (const sc of inScope) {
      const org = c.organizations.get(sc.organization)!;
      const type = org.kind === 'market_maker' ? 'mm' : 'gb';
      const pairs = scopeOf(org, c.lists).pairs.filter((p) => p.asset === sc.asset);
      for (const p of pairs) {
        for (const metric of sc.metrics ?? []) {
          const def = defaultTarget({ type, organization: org.slug, asset: sc.asset, exchange: p.exchange, pair: p.pair, metric });
          const current: Target | undefined = byKey.get(targetKey(def));
          prefill.push(current ? shown(current, current.effective_threshold) : shown(def, def.threshold));
        }
      }
    }
    ctx.body = {
      prefill: { default: prefill, market_hours: targetSessionHours() },
      changes,
      summary: { added, modified, removed },
      batch: { delete_ids: deleteIds, create_targets: create },
    };
  };
}
