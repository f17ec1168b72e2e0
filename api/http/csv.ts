import { stringify } from 'csv-stringify/sync';
import type { Context } from 'koa';

/** `type=csv` and `filename` come from the query string on GET and POST alike, as the contract checked them. */
export function wantsCsv(ctx: Context): { csv: boolean; filename: string } {
  const q = (ctx.state.query ?? {}) as { type?: 'csv'; filename?: string };
  return { csv: q.type === 'csv', filename: q.filename ?? 'data.csv' };
}

/** The JSON rows as CSV, same columns in the same order; an object cell is written as its slug, a boolean as true or false. */
export function sendRows(ctx: Context, rows: Record<string, unknown>[], columns: string[], out: { csv: boolean; filename: string }): void {
  if (!out.csv) {
    ctx.body = rows;
    return;
  }
  const cell = (v: unknown) => (v !== null && typeof v === 'object' && 'slug' in (v as object) ? (v as { slug: string }).slug : v);
  ctx.type = 'text/csv; charset=utf-8';
  ctx.set('Content-Disposition', `attachment; filename="${out.filename}"`);
  ctx.body = stringify(
    rows.map((r) => columns.map((c) => cell(r[c]))),
    { header: true, columns, cast: { number: (n) => String(n), boolean: (b) => (b ? 'true' : 'false') } },
  );
}
