// Recorded answers compared to a number of significant digits: ClickHouse adds the same
// floats in another order from one run to the next, so the last binary digits of a sum
// move. Every number of a JSON body or a CSV cell is rounded (to digits + 2, then to
// digits, so a value on a rounding edge rounds the same way both times).
/** A number as a JSON body or a CSV cell writes it. */
export const NUMBER = /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i;

export function roundedAnswer(text: string, csv: boolean, digits: number): string {
  const round = (n: number) => Number(Number(n.toPrecision(digits + 2)).toPrecision(digits));
  if (csv) return text.split('\n').map((line) => line.split(',').map((cell) => (NUMBER.test(cell) ? String(round(Number(cell))) : cell)).join(',')).join('\n');
  const walk = (v: unknown): unknown => {
    if (typeof v === 'number') return round(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return JSON.stringify(walk(JSON.parse(text)));
}
