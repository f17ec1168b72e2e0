// The market statements an endpoint ran, as bench:api records them from the API's
// connection: written to a file with their bound values (--dump-sql) and run again as the
// endpoint ran them, by bench:api's bare runs and by bench:engine-scale.
import fs from 'node:fs';
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse, Params } from '../lib/clickhouse.ts';

/** The statements' file in each folder bench:api-scale keeps (bench:engine-scale reads it). */
export const STATEMENTS_FILE = 'statements.json';

/**
 * A market query the API ran: its SQL and bound values, and for output ClickHouse writes
 * as JSON, its columns (and, for keyed lines, the key columns).
 */
export interface Captured {
  sql: string;
  params: Params;
  jsonColumns?: string[];
  jsonKeys?: string[];
  /** Queries of one wave were started while others of it ran; a wave starts after the one before ended. */
  wave: number;
}

/** A tuple parameter in the file: JSON has no tuples. */
interface FileTuple {
  tuple: unknown[];
}

const isFileTuple = (x: unknown): x is FileTuple => typeof x === 'object' && x !== null && Array.isArray((x as FileTuple).tuple);

/** Adds (or replaces) an endpoint's statements under `name` in a JSON file. */
export function writeStatements(file: string, name: string, queries: Captured[]): void {
  const all: Record<string, unknown> = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  const value = (v: unknown): unknown => (v instanceof TupleParam ? { tuple: v.values } : Array.isArray(v) ? v.map(value) : v);
  all[name] = queries.map((q) => ({ ...q, params: Object.fromEntries(Object.entries(q.params).map(([k, v]) => [k, value(v)])) }));
  fs.writeFileSync(file, JSON.stringify(all, null, 1));
}

/** Every endpoint's statements in a file writeStatements wrote, ready to run. */
export function readStatements(file: string): Map<string, Captured[]> {
  const all = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, Captured[]>;
  const value = (v: unknown): unknown => (isFileTuple(v) ? new TupleParam(v.tuple) : Array.isArray(v) ? v.map(value) : v);
  return new Map(
    Object.entries(all).map(([name, queries]) => [name, queries.map((q) => ({ ...q, params: Object.fromEntries(Object.entries(q.params).map(([k, v]) => [k, value(v)])) }))]),
  );
}

/**
 * The statements run again as the endpoint ran them: rows parsed, or output read to its
 * last byte; each wave all at once, waves one after the other. `rows` is the first
 * statement's row count, or its output's bytes.
 */
export async function runStatements(ch: ClickHouse, queries: Captured[]): Promise<{ ms: number; rows: number }> {
  const run = async (q: Captured): Promise<number> => {
    if (q.jsonKeys) return (await ch.jsonLines(q.sql, q.jsonKeys, q.jsonColumns!, q.params)).length;
    if (!q.jsonColumns) return (await ch.query(q.sql, q.params)).length;
    let bytes = 0;
    for await (const chunk of await ch.jsonArray(q.sql, q.jsonColumns, q.params)) bytes += (chunk as Buffer).length;
    return bytes;
  };
  const t = performance.now();
  const sizes: number[] = [];
  for (const wave of [...new Set(queries.map((q) => q.wave))]) sizes.push(...(await Promise.all(queries.filter((q) => q.wave === wave).map(run))));
  return { ms: performance.now() - t, rows: sizes[0] ?? 0 };
}
