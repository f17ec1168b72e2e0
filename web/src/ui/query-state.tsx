import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';

/** Loading and error states of one query, in the API's words; the content once there is data. */
/** `emptyText`: what an empty answer means here (a list with nothing in it, rather than a chart without data). */
export function QueryState<T>({ query, empty, emptyText = 'No data for these parameters.', children }: { query: UseQueryResult<T>; empty?: (data: T) => boolean; emptyText?: string; children: (data: T) => ReactNode }) {
  if (query.isPending) return <p className="muted" role="status">Loading…</p>;
  if (query.isError) return <p role="alert" className="error">{query.error.message}</p>;
  if (empty?.(query.data)) return <p className="muted">{emptyText}</p>;
  return <>{children(query.data)}</>;
}

export function Panel({ title, actions, children, wide }: { title: string; actions?: ReactNode; children: ReactNode; wide?: boolean }) {
  const id = `panel-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section className={wide ? 'panel wide' : 'panel'} aria-labelledby={id}>
      <header>
        <h2 id={id}>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}
