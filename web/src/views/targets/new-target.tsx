// A new target of any kind the API takes (specification 2.4, 4.8, 4.9; addendum section 6):
// a project's `gb` target or a market maker's `mm` target (the type follows the
// organization), every metric identifier of the type, a threshold or the metric's default,
// its direction, all hours or one session, active or not, Telegram, and price scaling
// (mode, source, reference price). It goes through the preview (shown before "Save") and
// the batch; the API's words for a problem are shown at the field they name.
import { useMutation } from '@tanstack/react-query';
import { useMemo, useRef, useState } from 'react';
import { GB_METRICS, MM_METRICS } from '../../../../domain/market/facts.ts';
import { DIRECTIONS, SCALING_MODES, SCALING_SOURCES, TARGET_SESSIONS, targetSessionHours } from '../../../../domain/targets/facts.ts';
import type { Schemas } from '../../api/client';
import { useNamedMarketMakers, useScope, type Organization } from '../../api/organizations';
import { Panel } from '../../ui/query-state';
import { Field } from '../../ui/field';
import { fieldMessages, PreviewShown, previewWith, useSaveBatch, type FieldMessages, type MetricId, type Preview, type TargetInput } from './preview';

// The sets are the domain's (one source for the API and the app); these lines hold them to
// the document's types.
const SESSIONS: readonly Schemas['TargetSession'][] = TARGET_SESSIONS;
/** Each session with the hours it is evaluated over, in the sessions' zone. */
const SESSION_HOURS = targetSessionHours();
const SESSION_CHOICES = SESSIONS.map((s): [string, string] => {
  const h = SESSION_HOURS.sessions[s];
  // Days shortened (Mon-Fri): the choice fits a phone's width.
  const days = h.days.split('-').map((d) => d.slice(0, 3)).join('-');
  return [s, `${s}: ${days} ${h.start}-${h.end}`];
});
const MODES: readonly NonNullable<TargetInput['scaling_mode']>[] = SCALING_MODES;
const SOURCES: readonly NonNullable<TargetInput['scaling_source']>[] = SCALING_SOURCES;
const DIRECTION_CHOICES: readonly NonNullable<TargetInput['direction']>[] = DIRECTIONS;
/** Every identifier of a type (part 4.9), each one the document's MetricId. */
const METRICS = { gb: GB_METRICS as readonly MetricId[], mm: MM_METRICS as readonly MetricId[] };

/** A metric's family: its identifier without the last part (`depth`, `uptime/depth`, ...). */
const familyOf = (m: string) => m.slice(0, m.lastIndexOf('/'));

interface OrgChoice {
  slug: string;
  name: string;
  kind: 'project' | 'market_maker';
  /** Its pairs as the caller knows them: its own (one of the caller's organizations), or the caller's projects' (a market maker on the caller's assets). */
  pairs: Organization['pairs'];
}

const OTHER = '';

/**
 * The organizations whose targets the caller may manage (docs/targets.md): its projects
 * (`gb`), and the market makers on its projects' assets (`mm`). The API lists no market
 * makers to a project, so those offered are the ones it has named to the caller (in the
 * caller's organizations, as for staff, in its loans and in the `mm` targets it sees), and
 * any other is given by its slug.
 */
function useChoices(): { choices: OrgChoice[]; projectPairs: Organization['pairs'] } | null {
  const scope = useScope();
  const makers = useNamedMarketMakers();
  return useMemo(() => {
    const orgs = scope.data?.organizations ?? [];
    const projects = orgs.filter((o) => o.kind === 'project' && o.pairs.length > 0);
    if (projects.length === 0) return null;
    const projectPairs = projects.flatMap((o) => o.pairs);
    const choices: OrgChoice[] = projects.map((o) => ({ slug: o.slug, name: o.name, kind: 'project', pairs: o.pairs }));
    for (const o of orgs) if (o.kind === 'market_maker') choices.push({ slug: o.slug, name: o.name, kind: 'market_maker', pairs: o.pairs.length > 0 ? o.pairs : projectPairs });
    for (const [slug, name] of makers.data ?? []) if (!choices.some((c) => c.slug === slug)) choices.push({ slug, name, kind: 'market_maker', pairs: projectPairs });
    return { choices, projectPairs };
  }, [scope.data, makers.data]);
}

export function NewTarget() {
  const c = useChoices();
  if (!c) return null;
  return <NewTargetForm choices={c.choices} projectPairs={c.projectPairs} />;
}

/** A choice among options given as [value, text]. */
function SelectField({ label, errors, value, options, onChange }: { label: string; errors?: string[]; value: string; options: [string, string][]; onChange: (v: string) => void }) {
  return (
    <Field label={label} errors={errors}>
      {(a) => (
        <select {...a} value={value} onChange={(e) => onChange(e.target.value)}>
          {options.map(([v, text]) => <option key={v} value={v}>{text}</option>)}
        </select>
      )}
    </Field>
  );
}

/** Options whose text is their value. */
const same = (list: readonly string[]): [string, string][] => list.map((x) => [x, x]);

function NewTargetForm({ choices, projectPairs }: { choices: OrgChoice[]; projectPairs: Organization['pairs'] }) {
  const [orgChosen, setOrg] = useState(choices[0]!.slug);
  const [otherSlug, setOtherSlug] = useState('');
  const known = choices.find((o) => o.slug === orgChosen);
  // A slug typed in is taken for a market maker's: the caller's projects are all offered above.
  const org: OrgChoice = known ?? { slug: otherSlug.trim(), name: otherSlug.trim(), kind: 'market_maker', pairs: projectPairs };
  const type = org.kind === 'project' ? 'gb' : 'mm';
  const assets = [...new Set(org.pairs.map((p) => p.asset))].sort();
  const [assetChosen, setAsset] = useState('');
  const asset = assets.includes(assetChosen) ? assetChosen : (assets[0] ?? '');
  const pairs = org.pairs.filter((p) => p.asset === asset);
  const [pairChosen, setPair] = useState('');
  const pair = pairs.find((p) => `${p.exchange} ${p.pair}` === pairChosen) ?? pairs[0];
  const metrics = METRICS[type];
  const families = [...new Set(metrics.map(familyOf))];
  const [familyChosen, setFamily] = useState('');
  const family = families.includes(familyChosen) ? familyChosen : families[0]!;
  const inFamily = metrics.filter((m) => familyOf(m) === family);
  const [metricChosen, setMetric] = useState('');
  const metric = inFamily.find((m) => m === metricChosen) ?? inFamily[0]!;
  const [threshold, setThreshold] = useState('');
  const [direction, setDirection] = useState('');
  const [hours, setHours] = useState('');
  const [active, setActive] = useState(true);
  const [telegram, setTelegram] = useState(false);
  const [scaling, setScaling] = useState(false);
  const [mode, setMode] = useState<(typeof MODES)[number]>('price');
  const [source, setSource] = useState<(typeof SOURCES)[number]>('manual');
  const [reference, setReference] = useState('');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [problems, setProblems] = useState<{ fields: FieldMessages; general: string | null }>({ fields: {}, general: null });
  const [saved, setSaved] = useState(false);
  const changed = <T,>(set: (v: T) => void) => (v: T) => {
    set(v);
    setPreview(null);
    setSaved(false);
  };
  const numberOf = (v: string) => (v.trim() === '' ? undefined : Number(v));

  const added = (): TargetInput => ({
    organization: org.slug,
    asset,
    exchange: pair?.exchange ?? '',
    pair: pair?.pair ?? '',
    metric,
    // Left empty: the metric's default threshold and direction (the preview shows them).
    ...(threshold.trim() !== '' ? { threshold: Number(threshold) } : {}),
    ...(direction ? { direction: direction as (typeof DIRECTION_CHOICES)[number] } : {}),
    market_hours: (hours || null) as TargetInput['market_hours'],
    active,
    telegram_notifications: telegram,
    ...(scaling ? { scaling_enabled: true, scaling_mode: mode, scaling_source: source, ...(numberOf(reference) !== undefined ? { scaling_reference_price: numberOf(reference) } : {}) } : { scaling_enabled: false }),
  });
  // The new target goes last, after the scope's existing ones: its errors are at that index.
  const index = useRef(0);
  const ask = useMutation({
    mutationFn: () =>
      previewWith({ organization: org.slug, asset, metric }, (existing) => {
        index.current = existing.length;
        return [...existing, added()];
      }),
    onSuccess: (p) => {
      setPreview(p);
      setProblems({ fields: {}, general: null });
    },
    onError: (e) => setProblems(fieldMessages(e, { list: 'targets', index: index.current })),
  });
  const save = useSaveBatch(() => {
    setPreview(null);
    setSaved(true);
  });
  const onSave = (p: Preview) => {
    const key = (t: { organization: string; asset: string; exchange: string; pair: string; metric: string; market_hours?: string | null }) => [t.organization, t.asset, t.exchange, t.pair, t.metric, t.market_hours ?? ''].join(' ');
    const mine = p.batch.create_targets.findIndex((t) => key(t) === key({ ...added(), market_hours: hours || null }));
    save.mutate(p, { onError: (e) => setProblems(fieldMessages(e, { list: 'create_targets', index: mine })) });
  };
  const f = problems.fields;
  const seen = new Set(['organization', 'type', 'asset', 'pair', 'metric', 'threshold', 'direction', 'market_hours', 'active', 'telegram_notifications', 'scaling_enabled', 'scaling_mode', 'scaling_source', 'scaling_reference_price']);
  const elsewhere = Object.entries(f).filter(([k]) => !seen.has(k));

  return (
    <Panel title="New target" wide>
      <form className="controls target-form" aria-label="New target" noValidate onSubmit={(e) => { e.preventDefault(); ask.mutate(); }}>
        <SelectField
          label="Organization"
          errors={[...(f.organization ?? []), ...(f.type ?? [])]}
          value={known ? orgChosen : OTHER}
          options={[...choices.map((o): [string, string] => [o.slug, `${o.name} (${o.kind === 'project' ? 'project: gb' : 'market maker: mm'})`]), [OTHER, 'Another market maker…']]}
          onChange={changed(setOrg)}
        />
        {!known && (
          <Field label="Market maker's slug" errors={f.organization}>
            {(a) => <input {...a} required value={otherSlug} onChange={(e) => changed(setOtherSlug)(e.target.value)} />}
          </Field>
        )}
        <SelectField label="Asset" errors={f.asset} value={asset} options={same(assets)} onChange={changed(setAsset)} />
        <SelectField label="Exchange and pair" errors={f.pair} value={pair ? `${pair.exchange} ${pair.pair}` : ''} options={same(pairs.map((p) => `${p.exchange} ${p.pair}`))} onChange={changed(setPair)} />
        <SelectField label={`Metric family (${type})`} value={family} options={same(families)} onChange={changed(setFamily)} />
        <SelectField label="Metric" errors={f.metric} value={metric} options={same(inFamily)} onChange={changed(setMetric)} />
        <Field label="Threshold" errors={f.threshold}>
          {(a) => <input {...a} type="number" step="any" placeholder="the metric's default" value={threshold} onChange={(e) => changed(setThreshold)(e.target.value)} />}
        </Field>
        <SelectField label="Direction" errors={f.direction} value={direction} options={[['', "the metric's default"], ...same(DIRECTION_CHOICES)]} onChange={changed(setDirection)} />
        <SelectField label={`Market hours (${SESSION_HOURS.timezone} time)`} errors={f.market_hours} value={hours} options={[['', 'all hours'], ...SESSION_CHOICES]} onChange={changed(setHours)} />
        <Field label="Active" check errors={f.active}>
          {(a) => <input {...a} type="checkbox" checked={active} onChange={(e) => changed(setActive)(e.target.checked)} />}
        </Field>
        <Field label="Telegram notifications" check errors={f.telegram_notifications}>
          {(a) => <input {...a} type="checkbox" checked={telegram} onChange={(e) => changed(setTelegram)(e.target.checked)} />}
        </Field>
        <fieldset>
          <legend>Threshold scaling</legend>
          <Field label="Scale the threshold" check errors={f.scaling_enabled}>
            {(a) => <input {...a} type="checkbox" checked={scaling} onChange={(e) => changed(setScaling)(e.target.checked)} />}
          </Field>
          {scaling && (
            <>
              <SelectField label="Scaling mode" errors={f.scaling_mode} value={mode} options={same(MODES)} onChange={(v) => changed(setMode)(v as typeof mode)} />
              <SelectField label="Price source" errors={f.scaling_source} value={source} options={same(SOURCES)} onChange={(v) => changed(setSource)(v as typeof source)} />
              <Field label="Reference price (USD)" errors={f.scaling_reference_price}>
                {(a) => <input {...a} type="number" step="any" value={reference} onChange={(e) => changed(setReference)(e.target.value)} />}
              </Field>
            </>
          )}
        </fieldset>
        <button type="submit" disabled={ask.isPending || !pair || !org.slug}>Preview the new target</button>
      </form>
      {(problems.general || elsewhere.length > 0) && (
        <p role="alert" className="error">{[problems.general, ...elsewhere.map(([k, m]) => `${k}: ${m.join(' ')}`)].filter(Boolean).join(' ')}</p>
      )}
      {saved && <p role="status">Saved.</p>}
      {preview && <PreviewShown preview={preview} saving={save.isPending} onSave={() => onSave(preview)} />}
    </Panel>
  );
}
