import { useMemo, useState, type ReactNode } from 'react';

export interface Column<R> {
  key: string;
  label: string;
  /** The value sorted on (and shown when there is no render). */
  value: (row: R) => number | string | null;
  render?: (row: R) => ReactNode;
  numeric?: boolean;
  sortable?: boolean;
}

export interface Sort {
  key: string;
  direction: 'asc' | 'desc';
}

/**
 * A table whose column headers sort it (buttons, so the keyboard reaches them). With `sort`
 * and `onSort` the caller sorts (the leaderboard asks the API); without, it sorts its rows.
 */
export function Table<R>({ caption, columns, rows, rowKey, sort, onSort }: { caption: string; columns: Column<R>[]; rows: R[]; rowKey: (r: R) => string; sort?: Sort; onSort?: (s: Sort) => void }) {
  const [own, setOwn] = useState<Sort | null>(null);
  const active = sort ?? own;
  const shown = useMemo(() => {
    if (onSort || !active) return rows;
    const col = columns.find((c) => c.key === active.key);
    if (!col) return rows;
    const sign = active.direction === 'asc' ? 1 : -1;
    return [...rows].sort((a, b) => {
      const x = col.value(a);
      const y = col.value(b);
      if (x === null) return y === null ? 0 : 1;
      if (y === null) return -1;
      return (x < y ? -1 : x > y ? 1 : 0) * sign;
    });
  }, [rows, columns, active, onSort]);
  const toggle = (key: string) => {
    const next: Sort = { key, direction: active?.key === key && active.direction === 'desc' ? 'asc' : 'desc' };
    if (onSort) onSort(next);
    else setOwn(next);
  };
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label={caption}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => {
              const ariaSort = active?.key === c.key ? (active.direction === 'asc' ? 'ascending' : 'descending') : undefined;
              return (
                <th key={c.key} scope="col" aria-sort={ariaSort} className={c.numeric ? 'num' : undefined}>
                  {c.sortable === false ? (
                    c.label
                  ) : (
                    <button type="button" className="sort" onClick={() => toggle(c.key)}>
                      {c.label}
                      <span aria-hidden="true">{ariaSort === 'ascending' ? ' ▲' : ariaSort === 'descending' ? ' ▼' : ''}</span>
                    </button>
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={rowKey(r)}>
              {columns.map((c, i) =>
                i === 0 ? (
                  <th key={c.key} scope="row" className={c.numeric ? 'num' : undefined}>
                    {c.render ? c.render(r) : c.value(r)}
                  </th>
                ) : (
                  <td key={c.key} className={c.numeric ? 'num' : undefined}>
                    {c.render ? c.render(r) : c.value(r)}
                  </td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
