// A ClickHouse connection lent to a worker thread. The embedded engine belongs to the
// process's main thread: chdb binds one data folder per process, a session opened on it
// from a worker joins the same engine but hangs the process at its close, and the line of
// bound statements that puts the API's statements first (lib/statement-queue.ts) is one
// per thread. So a worker's statements are posted to the main thread and run there on a
// connection of the worker's own, with the same priority, retries and cancel() as any
// other. With CLICKHOUSE_URL the same relay talks to the server through the main thread.
import { TupleParam, type ClickHouseSettings } from '@clickhouse/client';
import type { MessagePort } from 'node:worker_threads';
import type { ClickHouse, CommandOptions, InsertOptions, Params } from './clickhouse.ts';
import type { Columns } from './native-columns.ts';
// Not from clickhouse.ts, which loads chdb: an addon loaded in a worker closes the
// process's engine when the worker ends.
import { ClickHouseQueryError, ClickHouseStoppedError } from './clickhouse-errors.ts';

type Call =
  | { id: number; op: 'query'; sql: string; params: Params; settings?: ClickHouseSettings }
  | { id: number; op: 'queryBinary'; sql: string; params: Params }
  | { id: number; op: 'queryColumns'; sql: string; params: Params }
  | { id: number; op: 'jsonLines'; sql: string; keys: string[]; columns: string[]; params: Params }
  | { id: number; op: 'command'; sql: string; params: Params; opts: CommandOptions }
  | { id: number; op: 'insert'; table: string; rows: object[]; opts: InsertOptions }
  | { id: number; op: 'cancel'; withinMs?: number };

interface RelayedError {
  name: string;
  message: string;
  queryId?: string;
  attempts?: number;
}

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: RelayedError };

/** A bound tuple does not survive structured cloning (its class is lost): it crosses as a marked object. */
const TUPLE = '__clickhouse_tuple__';

function encodeParam(v: unknown): unknown {
  if (v instanceof TupleParam) return { [TUPLE]: v.values.map(encodeParam) };
  if (Array.isArray(v)) return v.map(encodeParam);
  return v;
}

function decodeParam(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decodeParam);
  if (v !== null && typeof v === 'object' && TUPLE in v) return new TupleParam((v as Record<string, unknown[]>)[TUPLE]!.map(decodeParam));
  return v;
}

const mapParams = (params: Params, f: (v: unknown) => unknown): Params => Object.fromEntries(Object.entries(params).map(([k, v]) => [k, f(v)]));

/** Main thread: runs the statements a worker posts on `port` with `ch`, until the port closes. */
export function serveClickHouse(ch: ClickHouse, port: MessagePort): void {
  port.on('message', (call: Call) => {
    let done: Promise<unknown>;
    switch (call.op) {
      case 'query':
        done = ch.query(call.sql, mapParams(call.params, decodeParam), call.settings);
        break;
      case 'queryBinary':
        done = ch.queryBinary(call.sql, mapParams(call.params, decodeParam));
        break;
      case 'queryColumns':
        done = ch.queryColumns(call.sql, mapParams(call.params, decodeParam));
        break;
      case 'jsonLines':
        done = ch.jsonLines(call.sql, call.keys, call.columns, mapParams(call.params, decodeParam));
        break;
      case 'command':
        done = ch.command(call.sql, mapParams(call.params, decodeParam), call.opts);
        break;
      case 'insert':
        done = ch.insert(call.table, call.rows, call.opts);
        break;
      case 'cancel':
        done = ch.cancel(call.withinMs);
        break;
    }
    done.then(
      (value) => port.postMessage({ id: call.id, ok: true, value } satisfies Reply),
      (e: unknown) => {
        const err = e as Error & { queryId?: string; attempts?: number };
        port.postMessage({ id: call.id, ok: false, error: { name: err.name, message: err.message, queryId: err.queryId, attempts: err.attempts } } satisfies Reply);
      },
    );
  });
}

function errorOf(e: RelayedError): Error {
  if (e.name === 'ClickHouseStoppedError') return new ClickHouseStoppedError(e.queryId ?? '');
  // The message already says what failed; its cause is what the main thread's error said.
  if (e.name === 'ClickHouseQueryError') {
    const err = new ClickHouseQueryError(e.queryId ?? '', new Error(e.message), e.attempts);
    err.message = e.message;
    return err;
  }
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

/** Worker thread: a ClickHouse whose statements run on the main thread (serveClickHouse). */
export function relayedClickHouse(port: MessagePort): ClickHouse {
  let seq = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  port.on('message', (reply: Reply) => {
    const w = waiting.get(reply.id);
    if (!w) return;
    waiting.delete(reply.id);
    if (reply.ok) w.resolve(reply.value);
    else w.reject(errorOf(reply.error));
  });
  // Waiting for an answer keeps the worker alive; an idle relay does not.
  port.unref();
  type Distributive<C> = C extends Call ? Omit<C, 'id'> : never;
  const call = <T>(c: Distributive<Call>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++seq;
      if (waiting.size === 0) port.ref();
      waiting.set(id, {
        resolve: (v) => {
          if (waiting.size === 0) port.unref();
          resolve(v as T);
        },
        reject: (e) => {
          if (waiting.size === 0) port.unref();
          reject(e);
        },
      });
      port.postMessage({ ...c, id } as Call);
    });
  return {
    query: <T>(sql: string, params: Params = {}, settings?: ClickHouseSettings) => call<T[]>({ op: 'query', sql, params: mapParams(params, encodeParam), settings }),
    queryBinary: <T>(sql: string, params: Params = {}) => call<T[]>({ op: 'queryBinary', sql, params: mapParams(params, encodeParam) }),
    // Structured cloning keeps a Map and typed arrays: Columns cross as they are.
    queryColumns: (sql, params = {}) => call<Columns>({ op: 'queryColumns', sql, params: mapParams(params, encodeParam) }),
    jsonArray: () => Promise.reject(new Error('jsonArray is not relayed: a worker reads no answers to pass on')),
    jsonLines: (sql, keys, columns, params = {}) => call<Uint8Array>({ op: 'jsonLines', sql, keys, columns, params: mapParams(params, encodeParam) }).then((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)),
    command: (sql, params = {}, opts = {}) => call<void>({ op: 'command', sql, params: mapParams(params, encodeParam), opts }),
    insert: (table, rows, opts = {}) => call<void>({ op: 'insert', table, rows, opts }),
    cancel: (withinMs) => call<void>({ op: 'cancel', withinMs }),
    // The connection is the main thread's, closed there.
    close: async () => undefined,
  };
}
