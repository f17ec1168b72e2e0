// Numbers and times as the views show them (and as the browser tests read them back).
const usd = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const plain = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const precise = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 6 });

export const DASH = '—';
/** A value that rounds to zero shows as 0, not "-0". */
const unsigned = (text: string): string => (/^-0(\.0*)?$/.test(text) ? text.slice(1) : text);
export const fmtUsd = (v: number | null | undefined): string => (v === null || v === undefined ? DASH : `$${unsigned(usd.format(v))}`);
export const fmtNum = (v: number | null | undefined): string => (v === null || v === undefined ? DASH : unsigned(plain.format(v)));
export const fmtPrice = (v: number | null | undefined): string => (v === null || v === undefined ? DASH : unsigned(precise.format(v)));
export const fmtPct = (v: number | null | undefined): string => (v === null || v === undefined ? DASH : `${unsigned(plain.format(v))} %`);

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

const zoneParts = new Map<string, Intl.DateTimeFormat>();

/** How far `zone`'s wall clock is ahead of UTC at instant `t`, in ms (daylight saving included). */
export function zoneOffsetMs(zone: string, t: number): number {
  let f = zoneParts.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    zoneParts.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(t)).map((x) => [x.type, x.value]));
  const wall = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return wall - (t - (t % 1000));
}
