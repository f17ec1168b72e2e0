// Changing targets goes through the preview (what would be added, modified, removed) and
// then its batch, as the API does it (specification 4.8, addendum section 6). Shared by the
// threshold change and the new-target form.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, apiWords, itemsOf, unwrap, type paths, type Schemas } from '../../api/client';
import { messagesOf } from '../../ui/field';
import { fmtNum } from '../../ui/format';

export type Target = Schemas['Target'];
export type TargetInput = Schemas['TargetInput'];
export type MetricId = Schemas['MetricId'];
export type Preview = paths['/v2/organizations/targets/preview/']['post']['responses'][200]['content']['application/json'];
type PreviewTarget = Schemas['PreviewTarget'];

export const describe = (t: { asset: string; exchange: string; pair: string; metric: string }) => `${t.asset} ${t.exchange} ${t.pair} ${t.metric}`;

/**
 * The document types a listed target's metric as text and the preview's input as a metric
 * identifier; the list only holds metrics the API accepted, so the text is one of them.
 */
export const metricOf = (t: Target) => t.metric as MetricId;

/** A listed target as the preview takes it back, unchanged. */
const inputOf = (t: Target): TargetInput => ({
  organization: t.organization.slug,
  asset: t.asset,
  exchange: t.exchange,
  pair: t.pair,
  metric: metricOf(t),
  threshold: t.threshold,
  direction: t.direction,
  active: t.active,
  market_hours: t.market_hours ?? undefined,
  telegram_notifications: t.telegram_notifications,
  scaling_mode: t.scaling_mode,
  scaling_enabled: t.scaling_enabled,
  scaling_source: t.scaling_source,
  scaling_reference_price: t.scaling_reference_price,
});

export interface ScopeKey {
  organization: string;
  asset: string;
  metric: MetricId;
}

/**
 * The preview takes the complete set of a scope (organization, asset, metric): a target of
 * the scope left out would be `removed`. So the scope is read whole from the list, not from
 * the board, whose filters may hide some of it. `change` gets the scope's targets and
 * returns the set to preview.
 */
export async function previewWith(scope: ScopeKey, change: (existing: TargetInput[]) => TargetInput[]): Promise<Preview> {
  const listed = unwrap(await api.GET('/v2/organizations/targets/', { params: { query: { target_organizations: [scope.organization], target_assets: [scope.asset], metrics: [scope.metric] } } }));
  const existing = itemsOf(listed).filter((t) => t.organization.slug === scope.organization && t.asset === scope.asset && t.metric === scope.metric).map(inputOf);
  const body: Schemas['PreviewBody'] = { scopes: [{ organization: scope.organization, asset: scope.asset, metrics: [scope.metric] }], targets: change(existing) };
  return unwrap(await api.POST('/v2/organizations/targets/preview/', { body }));
}

/** Saves a preview's batch (`onSaved` gets the targets it created); the board is asked again. */
export function useSaveBatch(onSaved: (created: Target[]) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    // The preview's batch is what the batch takes; the document types its fields (direction,
    // metric, scaling_source) as text where the batch's input has their enums.
    mutationFn: async (preview: Preview) => unwrap(await api.POST('/v2/organizations/targets/batch/', { body: preview.batch as Schemas['TargetBatchInput'] })),
    // Told once the board holds the saved targets, so that one can be shown at once.
    onSuccess: async (created) => {
      await queryClient.invalidateQueries({ queryKey: ['targets'] });
      onSaved(created);
    },
  });
}

/** What a previewed target will be: threshold (as shown, after scaling), direction, hours, scaling. */
function termsOf(t: PreviewTarget): string {
  const parts = [`${t.type}`, `${t.direction} ${fmtNum(t.display_threshold)}`, t.market_hours ?? 'all hours'];
  if (t.scaling.enabled) parts.push(`scaled (${t.scaling.mode}, ${t.scaling.scaling_source}, reference ${fmtNum(t.scaling.reference_price)})`);
  if (!t.active) parts.push('inactive');
  if (t.telegram_notifications) parts.push('Telegram');
  return parts.join(', ');
}

/** What the preview would change, and the button that saves it. */
export function PreviewShown({ preview, onSave, saving }: { preview: Preview; onSave: () => void; saving: boolean }) {
  return (
    <>
      <p>
        Added {preview.summary.added}, modified {preview.summary.modified}, removed {preview.summary.removed}.
      </p>
      <ul aria-label="Changes">
        {preview.changes.map((c, i) => {
          const t = c.after ?? c.before;
          return (
            <li key={i}>
              {c.action}: {t ? describe(t) : ''}
              {t && <span className="muted"> — {termsOf(t)}{c.used_default_fallback ? ", the metric's default threshold" : ''}{c.changed_fields.length ? `; changed: ${c.changed_fields.join(', ')}` : ''}</span>}
            </li>
          );
        })}
      </ul>
      <button type="button" onClick={onSave} disabled={saving}>Save</button>
    </>
  );
}

/** Messages by field name, as the API names them. */
export type FieldMessages = Record<string, string[]>;


/**
 * An error of the preview or the batch, split by field in the API's words: the posted
 * target's own object (`targets[i]`, `create_targets[i]`), the scope's (`scopes[0]`: its
 * asset and metrics), and a refusal of the organization (403). What names no field of the
 * target is `general`.
 */
export function fieldMessages(e: unknown, item: { list: 'targets' | 'create_targets'; index: number }): { fields: FieldMessages; general: string | null } {
  if (!(e instanceof ApiError)) return { fields: {}, general: e instanceof Error ? e.message : String(e) };
  if (e.status === 403) return { fields: { organization: [e.message] }, general: null };
  const body = (e.body && typeof e.body === 'object' ? e.body : {}) as Record<string, unknown>;
  const fields: FieldMessages = {};
  const add = (field: string, v: unknown) => {
    const m = messagesOf(v);
    if (m.length) fields[field] = [...(fields[field] ?? []), ...m];
  };
  const own = Array.isArray(body[item.list]) ? (body[item.list] as unknown[])[item.index] : undefined;
  let general: string | null = null;
  if (own && typeof own === 'object') {
    for (const [field, v] of Object.entries(own as Record<string, unknown>)) {
      if (field === 'non_field_errors') general = messagesOf(v).join(' ');
      else add(field === 'exchange' ? 'pair' : field, v);
    }
  }
  const scope = Array.isArray(body.scopes) ? (body.scopes as unknown[])[0] : undefined;
  if (scope && typeof scope === 'object') {
    const s = scope as Record<string, unknown>;
    add('asset', s.asset);
    add('metric', s.metrics);
    add('organization', s.organization);
  }
  if (Object.keys(fields).length === 0 && !general) general = apiWords(e.body) ?? e.message;
  return { fields, general };
}
