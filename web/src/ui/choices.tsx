// Small controls the views share: the lookback window and the bucket interval as the
// organization-scoped endpoints take them.
export const MM_LOOKBACKS = ['1-hour', '3-hours', '6-hours', '12-hours', '1-day', '7-days', '1-month'] as const;
export type MmLookback = (typeof MM_LOOKBACKS)[number];
export const MM_INTERVALS = ['5m', '1h', '1d'] as const;
/** The intervals in words, as the selects show them. */
export const INTERVAL_NAMES: Record<string, string> = { '1m': '1 minute', '5m': '5 minutes', '15m': '15 minutes', '30m': '30 minutes', '1h': '1 hour', '4h': '4 hours', '1d': '1 day', '1w': '1 week', '1M': '1 month', c: 'calendar (fewest buckets)' };
export type MmInterval = (typeof MM_INTERVALS)[number];

export function Select<T extends string>({ label, value, options, onChange, names }: { label: string; value: T; options: readonly T[]; onChange: (v: T) => void; names?: Record<string, string> }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value as T)}>
        {options.map((o) => (
          <option key={o} value={o}>
            {names?.[o] ?? o}
          </option>
        ))}
      </select>
    </label>
  );
}

export const pick = <T extends string>(list: readonly T[], v: string | null, fallback: T): T => (v && (list as readonly string[]).includes(v) ? (v as T) : fallback);
