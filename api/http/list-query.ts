// The list filters and paging of the loan, RFQ and proposal lists (as the targets list's:
// a plain array unless `page` or `page_size` is given).
export const DEFAULT_PAGE_SIZE = 50;

export interface ListQuery<L extends string> {
  lists: Partial<Record<L, string[]>>;
  page: number | undefined;
  pageSize: number | undefined;
}

/**
 * The lists and paging of a list operation from its query, as the contract checked and
 * typed it (lists of at most 100 known values, `page` >= 1, `page_size` 1 to 250).
 */
export function listQuery<L extends string>(query: unknown, names: readonly L[]): ListQuery<L> {
  const q = (query ?? {}) as Record<string, unknown>;
  const lists: Partial<Record<L, string[]>> = {};
  for (const name of names) {
    const v = q[name];
    if (Array.isArray(v) && v.length > 0) lists[name] = [...new Set(v.map(String))];
  }
  return { lists, page: q.page as number | undefined, pageSize: q.page_size as number | undefined };
}

/** The rows, or one page of them with the count, as the query asked. */
export async function paged<T, R>(rows: readonly T[], q: ListQuery<string>, present: (rows: readonly T[]) => Promise<R[]>): Promise<R[] | { count: number; page: number; page_size: number; results: R[] }> {
  if (q.page === undefined && q.pageSize === undefined) return present(rows);
  const size = q.pageSize ?? DEFAULT_PAGE_SIZE;
  const page = q.page ?? 1;
  return { count: rows.length, page, page_size: size, results: await present(rows.slice((page - 1) * size, page * size)) };
}
