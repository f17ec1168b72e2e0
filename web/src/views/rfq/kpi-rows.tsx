// Rows of `mm` metric terms (a request's requirements, a proposal's KPIs): each a metric of
// specification 4.9 and a threshold, its direction the metric's default; added and removed.
// Rows taken from saved terms keep what the form does not ask (the exchange, pair and
// session they are on; the direction while the metric stays) and say it.
import { MM_METRICS } from '../../../../domain/market/facts.ts';
import type { Schemas } from '../../api/client';

type Shown = Schemas['KpiShown'];

export interface KpiRow {
  metric: string;
  threshold: string;
  /** What saved terms set besides: sent back as it was, the direction only for the same metric. */
  kept?: Pick<Shown, 'metric' | 'exchange' | 'pair' | 'direction' | 'market_hours'>;
}

/** Saved terms as rows of the form. */
export const kpiRowsOf = (list: readonly Shown[]): KpiRow[] =>
  list.map(({ metric, threshold, exchange, pair, direction, market_hours }) => ({ metric, threshold: String(threshold), kept: { metric, exchange, pair, direction, market_hours } }));

/** The rows as the API takes them. */
export const kpisOf = (rows: KpiRow[]) =>
  rows.map(({ metric, threshold, kept }) => ({
    metric: metric as Schemas['MetricId'],
    threshold: Number(threshold),
    ...(kept && {
      exchange: kept.exchange,
      pair: kept.pair,
      market_hours: kept.market_hours as Schemas['Kpi']['market_hours'],
      ...(kept.metric === metric && { direction: kept.direction }),
    }),
  }));

/** Where a KPI applies, in words (nothing for every market and hour). */
export function scopeOf(k: Pick<Shown, 'exchange' | 'pair' | 'market_hours'> | undefined): string {
  const where = [k?.exchange, k?.pair].filter(Boolean).join(' ');
  return [where && `on ${where}`, k?.market_hours && `in ${k.market_hours}`].filter(Boolean).join(', ');
}

export function KpiRows({ legend, noun, rows, onChange }: { legend: string; noun: string; rows: KpiRow[]; onChange: (rows: KpiRow[]) => void }) {
  const set = (i: number, change: Partial<KpiRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...change } : r)));
  // In a sentence: "requirement", but "KPI" as it is written.
  const word = noun === noun.toUpperCase() ? noun : noun.toLowerCase();
  return (
    <fieldset>
      <legend>{legend}</legend>
      {rows.map((r, i) => (
        <div key={i} className="requirement" role="group" aria-label={`${noun} ${i + 1}`}>
          <label>
            Metric
            <select value={r.metric} onChange={(e) => set(i, { metric: e.target.value })}>
              {MM_METRICS.map((m) => <option key={m} value={m}>{m}</option>)}
            </select>
          </label>
          <label>
            Threshold
            <input type="number" step="any" required value={r.threshold} onChange={(e) => set(i, { threshold: e.target.value })} />
          </label>
          {scopeOf(r.kept) && <span className="note">{scopeOf(r.kept)}</span>}
          <button type="button" className="secondary" onClick={() => onChange(rows.filter((_, j) => j !== i))}>Remove {word} {i + 1}</button>
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => onChange([...rows, { metric: MM_METRICS[0]!, threshold: '' }])}>Add a {word}</button>
    </fieldset>
  );
}
