// The one gateway for ClickHouse. Embedded chdb by default (one data folder per process,
// several connections to it), or a ClickHouse server when CLICKHOUSE_URL is set: the same
// SQL and the same @clickhouse/client calls run against both. Every value is bound as
// {name:Type}; only identifiers the code itself chose are ever part of the SQL text.
import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from './config.ts';

export type Params = Record<string, unknown>;
type ChdbAsClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;

export interface InsertOptions {
  /** Makes a retried insert of the same rows a no-op (ClickHouse insert deduplication). */
  dedupToken?: string;
}

export interface ClickHouse {
  query<T>(sql: string, params?: Params, settings?: ClickHouseSettings): Promise<T[]>;
  /**
   * A SELECT's rows as one JSON array of objects, written by ClickHouse, for answers too
   * large to build in Node. The SQL has no SETTINGS or FORMAT clause; `columns` are its
   * column names in order, which become the keys.
   */
  jsonArray(sql: string, columns: string[], params?: Params): Promise<Readable>;
  /**
   * A SELECT's rows one a line, each `<key>\t<key>...\t<JSON object>`: the `keys` columns
   * written raw (numbers), then the `columns` as one JSON object, as jsonArray writes them.
   * For callers that pick rows of the answer apart by key (api/market/uptime.ts).
   */
  jsonLines(sql: string, keys: string[], columns: string[], params?: Params): Promise<Buffer>;
  command(sql: string, params?: Params): Promise<void>;
  insert<T extends object>(table: string, rows: T[], opts?: InsertOptions): Promise<void>;
  close(): Promise<void>;
}

export class ClickHouseQueryError extends Error {
  constructor(readonly queryId: string, cause: unknown) {
    super(`ClickHouse query ${queryId} failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'ClickHouseQueryError';
  }
}

let querySeq = 0;

export interface OpenOptions {
  /**
   * Embedded engine only: connections to open and spread statements over, least busy
   * first. One chdb connection runs one statement at a time; several run concurrently.
   * A server client already keeps a pool of HTTP connections.
   */
  connections?: number;
  /**
   * Embedded engine only: max_threads of each query, so connections running side by side
   * do not each start the engine's default (4 here) on two cores; a server keeps its own.
   */
  threadsPerQuery?: number;
  /**
   * ClickHouse's `priority` of every statement (1 is the highest). While a statement of a
   * higher priority runs, those of lower ones pause between blocks: the service gives the
   * API 1 and ingestion 2, so a minute's writes and rollups wait out a request instead of
   * sharing the cores with it (ops/service.ts).
   */
  priority?: number;
}

/**
 * jsonArray's output: ClickHouse's Template format, one row template naming every key,
 * with the settings of its JSON escaping rule. Measured on the benchmark's 50,700-row
 * spread uptime answer, writing it took about 40 ms less CPU than JSONEachRow, which
 * writes each key anew for every field (docs/benchmarks.md).
 */
const JSON_ARRAY = {
  resultset: '[\n${data}\n]\n',
  between: ',\n',
  json: { output_format_json_escape_forward_slashes: 0, output_format_json_quote_denormals: 0, output_format_json_quote_64bit_integers: 0 } as const,
};

/** The Template row of an object with these keys, each the name of a column. */
function jsonRowTemplate(columns: string[]): string {
  return `{${columns
    .map((c) => {
      // Names are the code's own (metric and level names); anything else would need escaping here.
      if (!/^[\w.]+$/.test(c)) throw new Error(`column name not allowed in a JSON row template: ${JSON.stringify(c)}`);
      return `"${c}":\${\`${c}\`:JSON}`;
    })
    .join(',')}}`;
}

/** jsonLines' output: the keys raw and a tab after each, then jsonArray's row; a row a line. */
const JSON_LINES = { resultset: '${data}\n', between: '\n' };

function keyedRowTemplate(keys: string[], columns: string[]): string {
  for (const k of keys) if (!/^\w+$/.test(k)) throw new Error(`key column name not allowed in a row template: ${JSON.stringify(k)}`);
  return `${keys.map((k) => `\${${k}:Raw}\t`).join('')}${jsonRowTemplate(columns)}`;
}

/** Opens a connection (or a few). Name it after its user ("api", "ingest"): ids in errors carry it. */
export function openClickHouse(config: Pick<Config, 'clickhouseUrl' | 'clickhouseDatabase' | 'dataDir'>, name: string, opts: OpenOptions = {}): ClickHouse {
  const clients: ClickHouseClient[] = [];
  if (config.clickhouseUrl) {
    clients.push(createClient({ url: config.clickhouseUrl, database: config.clickhouseDatabase, request_timeout: 120_000 }));
  } else {
    const dir = path.join(config.dataDir, 'clickhouse');
    fs.mkdirSync(dir, { recursive: true });
    for (let i = 0; i < Math.max(1, opts.connections ?? 1); i++) {
      // chdb ignores `database`: the embedded folder is ours alone, so tables live in `default`.
      // @clickhouse/client bundles its own copy of client-common, whose types chdb's Connection
      // matches structurally but not nominally; the cast bridges the two copies.
      const connection = createChdbConnection({ path: dir }) as unknown as ChdbAsClientConnection;
      clients.push(createClient({ connection }));
    }
  }
  const busy = clients.map(() => 0);
  const perStatement: ClickHouseSettings = {
    ...(!config.clickhouseUrl && opts.threadsPerQuery ? { max_threads: opts.threadsPerQuery } : {}),
    ...(opts.priority ? { priority: String(opts.priority) } : {}),
  };
  /** Runs fn on the least busy client. */
  const onClient = async <T>(fn: (client: ClickHouseClient) => Promise<T>): Promise<T> => {
    let i = 0;
    for (let j = 1; j < clients.length; j++) if (busy[j]! < busy[i]!) i = j;
    busy[i]!++;
    try {
      return await fn(clients[i]!);
    } finally {
      busy[i]!--;
    }
  };
  const nextId = () => `${name}-${process.pid}-${++querySeq}`;
  /** A SELECT's output in ClickHouse's Template format, with JSON escaping, as a stream. */
  const template = (query_id: string, sql: string, params: Params, formats: Record<string, string>): Promise<Readable> =>
    onClient(async (client) => {
      const settings = { ...formats, ...JSON_ARRAY.json };
      // A server takes them as the request's settings. The embedded engine would keep
      // client settings as session SETs (see the interface), so there they are bound
      // into the query's own SETTINGS clause.
      if (config.clickhouseUrl) {
        const { stream } = await client.exec({ query: `${sql}\nFORMAT Template`, query_params: params, query_id, clickhouse_settings: { ...settings, ...perStatement } });
        return stream;
      }
      const bound = Object.keys(settings).map((k) => `${k} = {tpl_${k}:String}`);
      const values = Object.fromEntries(Object.entries(settings).map(([k, v]) => [`tpl_${k}`, String(v)]));
      // The embedded engine has the whole output in memory when this resolves (errors surface here).
      const { stream } = await client.exec({
        query: `${sql}\nSETTINGS ${bound.join(', ')}\nFORMAT Template`,
        query_params: { ...params, ...values },
        query_id,
        clickhouse_settings: perStatement,
      });
      return stream;
    });
  const wrap = async <T>(fn: (queryId: string) => Promise<T>): Promise<T> => {
    const queryId = nextId();
    try {
      return await fn(queryId);
    } catch (e) {
      throw new ClickHouseQueryError(queryId, e);
    }
  };

  return {
    query: <T>(sql: string, params: Params = {}, settings?: ClickHouseSettings) =>
      wrap(async (query_id) => {
        // 64-bit integers as JSON numbers, on every query (see insert for why explicit).
        const clickhouse_settings: ClickHouseSettings = { output_format_json_quote_64bit_integers: 0, ...perStatement, ...settings };
        return onClient(async (client) => {
          const rs = await client.query({ query: sql, query_params: params, format: 'JSONEachRow', query_id, clickhouse_settings });
          return rs.json<T>();
        });
      }),
    jsonArray: (sql, columns, params = {}) =>
      wrap((query_id) =>
        template(query_id, sql, params, { format_template_row_format: jsonRowTemplate(columns), format_template_resultset_format: JSON_ARRAY.resultset, format_template_rows_between_delimiter: JSON_ARRAY.between }),
      ),
    jsonLines: (sql, keys, columns, params = {}) =>
      wrap(async (query_id) => {
        const stream = await template(query_id, sql, params, { format_template_row_format: keyedRowTemplate(keys, columns), format_template_resultset_format: JSON_LINES.resultset, format_template_rows_between_delimiter: JSON_LINES.between });
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      }),
    command: (sql, params = {}) =>
      wrap(async (query_id) => {
        await onClient((client) => client.command({ query: sql, query_params: params, query_id, clickhouse_settings: perStatement }));
      }),
    insert: (table, rows, opts = {}) =>
      wrap(async (query_id) => {
        if (rows.length === 0) return;
        // Always both settings, with explicit values: the embedded engine applies settings
        // as SET on its session, so a token left from an earlier insert would otherwise
        // apply to the next one.
        const clickhouse_settings: ClickHouseSettings = {
          ...perStatement,
          insert_deduplication_token: opts.dedupToken ?? '',
          // ...and keep the materialized views fed by this table from counting it twice.
          deduplicate_blocks_in_dependent_materialized_views: opts.dedupToken ? 1 : 0,
        };
        await onClient((client) => client.insert({ table, values: rows, format: 'JSONEachRow', query_id, clickhouse_settings }));
      }),
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}

/** With a server, the database must exist before a client bound to it can run anything. */
export async function ensureDatabase(config: Pick<Config, 'clickhouseUrl' | 'clickhouseDatabase'>): Promise<void> {
  if (!config.clickhouseUrl) return;
  const client = createClient({ url: config.clickhouseUrl });
  try {
    await client.command({ query: 'CREATE DATABASE IF NOT EXISTS {db:Identifier}', query_params: { db: config.clickhouseDatabase } });
  } finally {
    await client.close();
  }
}
