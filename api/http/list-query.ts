// The list filters and paging of the loan, RFQ and proposal lists (as the targets list's:
// comma-separated lists of at most 100, `page` >= 1, `page_size` 1 to 250; a plain array
// unless one of them is given). Every invalid parameter is named in one 400.
import type { ParsedUrlQuery } from 'node:querystring';
import { badRequest, type FieldErrors } from './errors.ts';

const MAX_LIST = 100;
export const DEFAULT_PAGE_SIZE = 50;

export interface ListQuery<L extends string> {
  lists: Partial<Record<L, string[]>>;
  page: number | undefined;
  pageSize: number | undefined;
}

export function parseListQuery<L extends string>(q: ParsedUrlQuery, names: readonly L[], choices: Partial<Record<L, readonly string[]>>): ListQuery<L> {
  const errors: FieldErrors = {};
  const fail = (f: string, m: string) => {
    errors[f] = [...((errors[f] as string[] | undefined) ?? []), m];
  };
  const lists: Partial<Record<L, string[]>> = {};
  for (const name of names) {
    const v = q[name];
    if (v === undefined) continue;
    const parts = [...new Set((Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).map((x) => x.trim()).filter((x) => x !== ''))];
    if (parts.length === 0) continue;
    if (parts.length > MAX_LIST) fail(name, `Ensure this field has no more than ${MAX_LIST} elements.`);
    const allowed = choices[name];
    if (allowed) for (const p of parts) if (!allowed.includes(p)) fail(name, `"${p}" is not a valid choice; expected one of: ${allowed.join(', ')}.`);
    lists[name] = parts;
  }
  const int = (name: string, min: number, max: number): number | undefined => {
    const v = q[name];
    const raw = Array.isArray(v) ? v.at(-1) : v;
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) fail(name, `A valid integer from ${min} to ${max} is required.`);
    return n;
  };
  const page = int('page', 1, Number.MAX_SAFE_INTEGER);
  const pageSize = int('page_size', 1, 250);
  if (Object.keys(errors).length > 0) throw badRequest(errors);
  return { lists, page, pageSize };
}

/** The rows, or one page of them with the count, as the query asked. */
export async function paged<T, R>(rows: readonly T[], q: ListQuery<string>, present: (rows: readonly T[]) => Promise<R[]>): Promise<R[] | { count: number; page: number; page_size: number; results: R[] }> {
  if (q.page === undefined && q.pageSize === undefined) return present(rows);
  const size = q.pageSize ?? DEFAULT_PAGE_SIZE;
  const page = q.page ?? 1;
  return { count: rows.length, page, page_size: size, results: await present(rows.slice((page - 1) * size, page * size)) };
}
