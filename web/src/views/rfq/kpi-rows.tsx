// Rows of `mm` metric terms (a request's requirements, a proposal's KPIs): each a metric of
// specification 4.9 and a threshold, its direction the metric's default; added and removed.
import { MM_METRICS } from '../../../../domain/market/facts.ts';
import type { Schemas } from '../../api/client';

export interface KpiRow {
  metric: string;
  threshold: string;
}

/** The rows as the API takes them. */
export const kpisOf = (rows: KpiRow[]) => rows.map((r) => ({ metric: r.metric as Schemas['MetricId'], threshold: Number(r.threshold) }));

export function KpiRows({ legend, noun, rows, onChange }: { legend: string; noun: string; rows: KpiRow[]; onChange: (rows: KpiRow[]) => void }) {
  const set = (i: number, change: Partial<KpiRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...change } : r)));
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
          <button type="button" className="secondary" onClick={() => onChange(rows.filter((_, j) => j !== i))}>Remove {noun.toLowerCase()} {i + 1}</button>
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => onChange([...rows, { metric: MM_METRICS[0]!, threshold: '' }])}>Add a {noun.toLowerCase()}</button>
    </fieldset>
  );
}
