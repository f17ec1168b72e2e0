// Numbers and times as the views show them (and as the browser tests read them back).
const usd = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const plain = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const precise = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 6 });

export const DASH = '—';
export const fmtUsd = (v: number | null | undefined): string => (v === null || v === undefined ? DASH : `$${usd.format(v)}`);
export const fmtNum = (v: number | null | undefined): string => (v === null || v === undefined ? DASH : plain.format(v));
export const fmtPrice = (v: number | null | undefined): string => (v === null || v === undefined ? DASH : precise.format(v));
export const fmtPct = (v: number | null | undefined): string => (v === null || v === undefined ? DASH : `${plain.format(v)} %`);

export function fmtTime(iso: string | null | undefined, zone?: string): string {
  if (!iso) return DASH;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString('en-GB', { timeZone: zone || 'UTC', year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', hour12: false });
}

/** An instant as a datetime-local input shows it: the browser's local time, to the minute. */
export function localInput(iso: string): string {
  const d = new Date(iso);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
}
