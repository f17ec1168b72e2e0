import { stringify } from 'csv-stringify/sync';
import type { Context } from 'koa';
import { badRequest } from './errors.ts';

/** `type=csv` and `filename` come from the query string on GET and POST alike. */
export function wantsCsv(ctx: Context): { csv: boolean; filename: string } {
  const type = ctx.query.type;
  const filename = typeof ctx.query.filename === 'string' && ctx.query.filename !== '' ? ctx.query.filename : 'data.csv';
  if (type !== undefined && type !== 'csv') throw badRequest({ type: [`"${String(type)}" is not a valid choice; expected: csv.`] });
  if (!/^[\w.() -]{1,200}$/.test(filename)) throw badRequest({ filename: ['Use letters, digits, spaces, ".", "-", "_" and parentheses (at most 200).'] });
  return { csv: type === 'csv', filename };
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
