// The one gateway for ClickHouse. Embedded chdb by default (one data folder per process,
// several connections to it), or a ClickHouse server when CLICKHOUSE_URL is set: the same
// SQL and the same @clickhouse/client calls run against both. Every value is bound as
// {name:Type}; only identifiers the code itself chose are ever part of the SQL text.
import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
// Before chdb: its allocator reads its options when the library loads.
import './embedded-allocator.ts';
import { drainPending, Session } from 'chdb';
import { createChdbConnection } from 'chdb/connection';
import diagnostics from 'node:diagnostics_channel';
import fs from 'node:fs';
import type { ClientRequest, IncomingMessage } from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DEFAULT_UNCOMPRESSED_CACHE_MB, type Config } from './config.ts';
import { StatementQueue, type Turn } from './statement-queue.ts';
import { ClickHouseQueryError, ClickHouseStoppedError } from './clickhouse-errors.ts';
import { createLogger, type Logger } from './log.ts';
import { readRowBinary } from './row-binary.ts';
import { readNativeColumns, type Columns } from './native-columns.ts';

export type Params = Record<string, unknown>;
type ChdbAsClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;

export interface InsertOptions {
  /**
   * Makes a retried insert of the same rows a no-op (ClickHouse insert deduplication). Only
   * an insert with a token is retried after a transient error: without one, an attempt that
   * failed after the server wrote the block would be written twice.
   */
  dedupToken?: string;
}

export interface CommandOptions {
  /**
   * Running the statement twice leaves what running it once does (CREATE ... IF NOT EXISTS,
   * an INSERT ... SELECT recompute into a ReplacingMergeTree), so it is retried after a
   * transient error. Unmarked commands are not: a failed attempt may still have run.
   */
  idempotent?: boolean;
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
   * For callers that pick rows of the answer apart by key (api/market-caches/uptime-rows.ts).
   */
  jsonLines(sql: string, keys: string[], columns: string[], params?: Params): Promise<Buffer>;
  /**
   * query's rows, read in ClickHouse's binary row format (lib/row-binary.ts), for reads of
   * many numbers: JSON costs the engine more to write them and Node far more to parse.
   * The SQL has no FORMAT clause (the read appends its own); it may end with SETTINGS.
   */
  queryBinary<T>(sql: string, params?: Params): Promise<T[]>;
  /** query's rows by column, read in the engine's columnar Native format (lib/native-columns.ts, Columns): for tens of thousands of rows of number arrays. */
  queryColumns(sql: string, params?: Params): Promise<Columns>;
  command(sql: string, params?: Params, opts?: CommandOptions): Promise<void>;
  insert<T extends object>(table: string, rows: T[], opts?: InsertOptions): Promise<void>;
  /**
   * Stops this connection's work for a shutdown: statements not yet started are refused
   * (ClickHouseStoppedError), none is retried, and those running are killed (KILL QUERY);
   * resolves once every one has ended, or after about `withinMs` (default 5000) with a
   * warning if the engine did not stop one. Without this, a process cannot exit while the
   * embedded engine runs a statement: its exit waits for the statement to finish.
   */
  cancel(withinMs?: number): Promise<void>;
  close(): Promise<void>;
}

// In a file of their own, so a worker thread's relay (lib/clickhouse-relay.ts) raises them
// without loading chdb there.
export { ClickHouseQueryError, ClickHouseStoppedError };

let querySeq = 0;

/**
 * The embedded engine's statements that bind values, of every connection of this process:
 * chdb runs them one at a time anyway; this picks which goes next (lib/statement-queue.ts),
 * by each connection's `priority`. After a second of waiting a statement goes next
 * whatever its priority: a request then waits for ingestion's oldest statement, and
 * ingestion never waits long behind a steady stream of requests.
 */
const BOUND_STATEMENTS = new StatementQueue({ maxWaitMs: 1000 });

/** Reports every turn in this process's line of bound statements (embedded engine only; a server has none). Returns what stops it. */
export const watchStatementLine = (watcher: (turn: Turn) => void): (() => void) => BOUND_STATEMENTS.watch(watcher);

/** Whether the embedded engine takes this statement through its line of bound statements (chdb binds only when there are values). */
const bindsValues = (params: Params): boolean => Object.keys(params).length > 0;

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
   * ClickHouse's `priority` of every statement (1, the default, is the highest). On a
   * server, while a statement of a higher priority runs, those of lower ones pause between
   * blocks. The embedded engine runs the statements that bind values one at a time: there
   * the most urgent waiting one goes next (BOUND_STATEMENTS). The service gives the API 1
   * and ingestion 2, so a minute's writes and rollups wait out a request instead of
   * delaying it (ops/service.ts).
   */
  priority?: number;
  /**
   * Reads through the engine's cache of decompressed blocks (`use_uncompressed_cache`): for
   * the API's many short reads of the same recent blocks. The embedded engine's cache is
   * UNCOMPRESSED_CACHE_MB; a server's is its own `uncompressed_cache_size`.
   */
  uncompressedCache?: boolean;
  /** Retries after transient errors (see transientReason); `{ retries: 0 }` turns them off. */
  retry?: RetryPolicy;
  /** Where retries are logged; by default stderr, at warn, as `clickhouse.<name>`. */
  log?: Logger;
}

export interface RetryPolicy {
  /** Attempts after the first; default 3. */
  retries?: number;
  /** The first backoff; each next one doubles, up to maxDelayMs. Default 100. */
  baseDelayMs?: number;
  /** Default 1000. */
  maxDelayMs?: number;
}

/**
 * ClickHouse error codes (src/Common/ErrorCodes.cpp) that say the server, or a replica or
 * Keeper behind it, could not take the statement just then, not that the statement is
 * wrong. The set is the one ClickHouse's Kafka connector retries, less the codes that also
 * mean a lasting condition here: READONLY (164, also a read-only user), MEMORY_LIMIT_EXCEEDED
 * (241, a query over its own limit fails again), FILE_DOESNT_EXIST (107),
 * UNEXPECTED_END_OF_FILE (3) and SYSTEM_ERROR (425).
 */
const TRANSIENT_CLICKHOUSE_CODES = new Set([
  159, // TIMEOUT_EXCEEDED: nothing here sets max_execution_time, so a wait on the server (locks, replicas) ran out
  202, // TOO_MANY_SIMULTANEOUS_QUERIES: refused before running
  203, // NO_FREE_CONNECTION: the server's pool to another server is exhausted
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  242, // TABLE_IS_READ_ONLY: a replica that lost its Keeper session, until it reconnects
  252, // TOO_MANY_PARTS: the insert is refused until merges catch up
  285, // TOO_FEW_LIVE_REPLICAS: insert quorum not met while a replica is down
  319, // UNKNOWN_STATUS_OF_INSERT: only inserts with a token are retried, which is what it asks for
  999, // KEEPER_EXCEPTION: a Keeper session lost or a request to it timed out
]);

/**
 * Node's codes for a connection that broke or could not be made. ECONNRESET includes
 * "socket hang up" (the server closed the connection before answering, e.g. a keep-alive
 * socket it had already dropped).
 */
const TRANSIENT_NODE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** A proxy or load balancer in front of the server answering for it (no ClickHouse code in the body). */
const TRANSIENT_HTTP_STATUSES = new Set([502, 503, 504]);

/**
 * Why an error is worth another attempt, or undefined. By codes only, never by message text:
 * `code` is ClickHouse's number (a string of digits, on the ClickHouseError of either copy of
 * client-common: the client's and chdb's) or Node's system error code; failing those, the
 * HTTP status. The client's own request timeout ("Timeout error.", no code) is not retried:
 * the statement ran for request_timeout and may still be running on the server.
 */
export function transientReason(e: unknown, httpStatus?: number): string | undefined {
  const code = (e as { code?: unknown } | null | undefined)?.code;
  if ((typeof code === 'string' && /^\d+$/.test(code)) || typeof code === 'number') {
    return TRANSIENT_CLICKHOUSE_CODES.has(Number(code)) ? `clickhouse-${code}` : undefined;
  }
  if (typeof code === 'string') return TRANSIENT_NODE_CODES.has(code) ? code : undefined;
  if (httpStatus !== undefined && TRANSIENT_HTTP_STATUSES.has(httpStatus)) return `http-${httpStatus}`;
  return undefined;
}

/**
 * The HTTP status of each answer to a statement in flight over a server, by query id.
 * @clickhouse/client builds a failed answer's error from its body alone (a ClickHouseError
 * when the body is ClickHouse's exception text, else an Error of the body) and drops the
 * status, which is all a proxy's 502/503/504 carries. Node's HTTP client publishes every
 * response on this channel before handing it on, so the status is here by the time the
 * error is.
 */
const statuses = new Map<string, number | undefined>();
let watchingStatuses = false;
function watchStatuses(): void {
  if (watchingStatuses) return;
  watchingStatuses = true;
  diagnostics.subscribe('http.client.response.finish', (message) => {
    if (statuses.size === 0) return;
    const { request, response } = message as { request: ClientRequest; response: IncomingMessage };
    const q = request.path.indexOf('?');
    const id = q < 0 ? null : new URLSearchParams(request.path.slice(q + 1)).get('query_id');
    if (id !== null && statuses.has(id)) statuses.set(id, response.statusCode);
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Rows an insert encodes as JSON between two turns of the event loop. */
const ENCODE_SLICE_ROWS = 200;

/**
 * The rows to insert, as a stream that lets the event loop run between slices when there
 * are many: the client encodes an array in one go, and a flush of every pair's minute at
 * thousands of pairs held the loop (API requests and the consumers with it) for as long
 * (docs/benchmarks.md, "Measurements behind the code").
 */
function insertValues<T extends object>(rows: T[]): T[] | Readable {
  if (rows.length <= ENCODE_SLICE_ROWS) return rows;
  return Readable.from(
    (async function* () {
      for (let i = 0; i < rows.length; i += ENCODE_SLICE_ROWS) {
        if (i > 0) await nextTurn();
        yield* rows.slice(i, i + ENCODE_SLICE_ROWS);
      }
    })(),
  );
}

/**
 * jsonArray's output: ClickHouse's Template format, one row template naming every key,
 * with the settings of its JSON escaping rule: it took less CPU than JSONEachRow, which
 * writes each key anew for every field (docs/benchmarks.md, "Measurements behind the code").
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

/**
 * A client for KILL QUERY, apart from the gateway's own connections (they may all be busy
 * with the statements to stop); one for the length of a cancel.
 */
function killerClient(config: GatewayConfig): ClickHouseClient {
  return config.clickhouseUrl ? createClient({ url: config.clickhouseUrl, database: config.clickhouseDatabase, request_timeout: 10_000 }) : embeddedClient(config);
}

/**
 * Kills the statements with these query ids (ASYNC: asks and returns; each statement ends
 * at its next block with code 394, QUERY_WAS_CANCELLED, which its caller receives).
 *
 * The embedded engine (chdb) replaces the query id it is given with a UUID of its own, so
 * there a statement is found by its log_comment, which carries our id (see openClickHouse).
 * Its ids are written into the SQL, not bound: chdb runs bound statements one at a time
 * across the process, so a bound KILL would wait behind the very statement it is to stop.
 * The ids are the gateway's own (`<name>-<pid>-<n>`), checked to be only word characters
 * and dashes.
 */
async function killStatements(client: ClickHouseClient, server: boolean, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  if (server) {
    await client.command({ query: 'KILL QUERY WHERE query_id IN {ids:Array(String)} ASYNC', query_params: { ids } });
    return;
  }
  for (const id of ids) if (!/^[\w-]+$/.test(id)) throw new Error(`query id not allowed in a KILL: ${JSON.stringify(id)}`);
  await client.command({ query: `KILL QUERY WHERE Settings['log_comment'] IN (${ids.map((id) => `'${id}'`).join(', ')}) ASYNC` });
}

/** What the gateway needs to open the embedded engine. */
export type EngineConfig = Pick<Config, 'dataDir'> & Partial<Pick<Config, 'uncompressedCacheBytes'>>;
/** What the gateway needs to open a connection: the engine's, or a server's address. */
export type GatewayConfig = EngineConfig & Pick<Config, 'clickhouseUrl' | 'clickhouseDatabase'>;

/**
 * The embedded engine of each folder this process has open, held by a session of our own
 * while any client of the gateway uses it. chdb starts one engine per folder, with the
 * server settings of the connection that opens it first, and createChdbConnection takes
 * none; this session starts it with ours (the uncompressed cache), and the clients after
 * it join that engine.
 */
const engines = new Map<string, { session: Session; clients: number }>();

function embeddedClient(config: EngineConfig): ClickHouseClient {
  const dir = path.join(config.dataDir, 'clickhouse');
  fs.mkdirSync(dir, { recursive: true });
  const engine = engines.get(dir) ?? { session: new Session(dir, { connectionArgs: [`--uncompressed_cache_size=${config.uncompressedCacheBytes ?? DEFAULT_UNCOMPRESSED_CACHE_MB * 2 ** 20}`] }), clients: 0 };
  engines.set(dir, engine);
  engine.clients++;
  let released = false;
  // The last client of the folder lets the engine go, so this process may open another.
  const release = () => {
    if (released) return;
    released = true;
    if (--engine.clients > 0) return;
    engines.delete(dir);
    engine.session.close();
  };
  let client: ClickHouseClient;
  try {
    // chdb ignores `database`: the embedded folder is ours alone, so tables live in `default`.
    // @clickhouse/client bundles its own copy of client-common, whose types chdb's Connection
    // matches structurally but not nominally; the cast bridges the two copies.
    const connection = createChdbConnection({ path: dir }) as unknown as ChdbAsClientConnection;
    client = createClient({ connection });
  } catch (e) {
    release();
    throw e;
  }
  const close = client.close.bind(client);
  client.close = async () => {
    try {
      await close();
    } finally {
      release();
    }
  };
  return client;
}

/**
 * Kills every statement the embedded engine of this process runs, whoever started it, each
 * time `kill` is called: for a command whose own connections are out of reach when it is
 * interrupted (bench/common.ts). The engine's data folder is this process's alone, so
 * nothing else is touched. None with a ClickHouse server.
 */
export function embeddedStatementKiller(config: EngineConfig & Pick<Config, 'clickhouseUrl'>): { kill(): Promise<void>; close(): Promise<void> } {
  if (config.clickhouseUrl) return { kill: async () => undefined, close: async () => undefined };
  const client = embeddedClient(config);
  return {
    kill: async () => {
      await client.command({ query: 'KILL QUERY WHERE query_id != queryID() ASYNC' });
    },
    close: () => client.close(),
  };
}

/**
 * Whether the embedded engine finished every statement of this process within `withinMs`.
 * A process cannot exit while one runs (its exit waits for the statement, and signals no
 * longer reach JavaScript), so a command asks this before it exits (ops/cli/run.ts).
 */
export async function embeddedEngineIdle(withinMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), withinMs);
  });
  try {
    return await Promise.race([drainPending().then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Opens a connection (or a few). Name it after its user ("api", "ingest"): ids in errors carry it. */
export function openClickHouse(config: GatewayConfig, name: string, opts: OpenOptions = {}): ClickHouse {
  if (!/^[\w-]+$/.test(name)) throw new Error(`connection name must be word characters and dashes: ${JSON.stringify(name)}`);
  const clients: ClickHouseClient[] = [];
  if (config.clickhouseUrl) {
    clients.push(createClient({ url: config.clickhouseUrl, database: config.clickhouseDatabase, request_timeout: 120_000 }));
  } else {
    for (let i = 0; i < Math.max(1, opts.connections ?? 1); i++) clients.push(embeddedClient(config));
  }
  const busy = clients.map(() => 0);
  const common: ClickHouseSettings = {
    // The market tables hold a partition a day (schemas/clickhouse/002_market_minutes.sql):
    // a backfill, a recompute of its rollups or a rekey's copy spans more than the 100 a
    // block ClickHouse allows by default, a guard against partition keys finer than ours.
    max_partitions_per_insert_block: '0',
    ...(!config.clickhouseUrl && opts.threadsPerQuery ? { max_threads: opts.threadsPerQuery } : {}),
    ...(opts.priority ? { priority: String(opts.priority) } : {}),
    ...(opts.uncompressedCache ? { use_uncompressed_cache: 1 } : {}),
  };
  // The embedded engine keeps its own query id; the log comment carries ours, for cancel().
  const perStatement = (queryId: string): ClickHouseSettings => (config.clickhouseUrl ? common : { ...common, log_comment: queryId });
  /** Statement attempts under way, by query id: what cancel() kills and waits for. */
  const running = new Map<string, Promise<unknown>>();
  let stopping = false;
  const priority = opts.priority ?? 1;
  /**
   * Runs fn on the least busy client. On the embedded engine a statement that binds values
   * (`bound`) first waits for its turn in the process's line of them (BOUND_STATEMENTS),
   * and is refused there if the connection began stopping meanwhile.
   */
  const onClient = async <T>(queryId: string, bound: boolean, fn: (client: ClickHouseClient) => Promise<T>): Promise<T> => {
    let i = 0;
    for (let j = 1; j < clients.length; j++) if (busy[j]! < busy[i]!) i = j;
    busy[i]!++;
    try {
      if (!bound || config.clickhouseUrl) return await fn(clients[i]!);
      return await BOUND_STATEMENTS.run(priority, () => {
        if (stopping) throw new ClickHouseStoppedError(queryId);
        return fn(clients[i]!);
      });
    } finally {
      busy[i]!--;
    }
  };
  const nextId = () => `${name}-${process.pid}-${++querySeq}`;
  const retries = Math.max(0, opts.retry?.retries ?? 3);
  const baseDelayMs = opts.retry?.baseDelayMs ?? 100;
  const maxDelayMs = opts.retry?.maxDelayMs ?? 1000;
  const log = opts.log ?? createLogger('warn', `clickhouse.${name}`);
  if (config.clickhouseUrl) watchStatuses();
  /** A SELECT's output in one of ClickHouse's binary formats, all of it. */
  const binary = async (format: 'RowBinaryWithNamesAndTypes' | 'Native', query_id: string, sql: string, params: Params): Promise<Buffer> => {
    const { stream } = await onClient(query_id, bindsValues(params), (client) =>
      client.exec({ query: `${sql}\nFORMAT ${format}`, query_params: params, query_id, clickhouse_settings: perStatement(query_id) }),
    );
    // Read out of the line of bound statements, as query's rows are.
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  };
  /** A SELECT's output in ClickHouse's Template format, with JSON escaping, as a stream. */
  const template = (query_id: string, sql: string, params: Params, formats: Record<string, string>): Promise<Readable> =>
    // Always bound on the embedded engine (the template's settings are).
    onClient(query_id, true, async (client) => {
      const settings = { ...formats, ...JSON_ARRAY.json };
      // A server takes them as the request's settings. The embedded engine would keep
      // client settings as session SETs (see the interface), so there they are bound
      // into the query's own SETTINGS clause.
      if (config.clickhouseUrl) {
        const { stream } = await client.exec({ query: `${sql}\nFORMAT Template`, query_params: params, query_id, clickhouse_settings: { ...settings, ...perStatement(query_id) } });
        return stream;
      }
      const bound = Object.keys(settings).map((k) => `${k} = {tpl_${k}:String}`);
      const values = Object.fromEntries(Object.entries(settings).map(([k, v]) => [`tpl_${k}`, String(v)]));
      // The embedded engine has the whole output in memory when this resolves (errors surface here).
      const { stream } = await client.exec({
        query: `${sql}\nSETTINGS ${bound.join(', ')}\nFORMAT Template`,
        query_params: { ...params, ...values },
        query_id,
        clickhouse_settings: perStatement(query_id),
      });
      return stream;
    });
  /**
   * Runs fn, and again after a transient error when the statement is safe to repeat, with
   * exponential backoff and jitter. Each attempt has its own query id (`<id>-r1`, ...): the
   * server may still be running the one before, and refuses a query id already running.
   */
  const wrap = async <T>(retryable: boolean, fn: (queryId: string) => Promise<T>): Promise<T> => {
    const first = nextId();
    for (let attempt = 1; ; attempt++) {
      const queryId = attempt === 1 ? first : `${first}-r${attempt - 1}`;
      if (stopping) throw new ClickHouseStoppedError(queryId);
      if (config.clickhouseUrl) statuses.set(queryId, undefined);
      const attemptDone = fn(queryId);
      running.set(queryId, attemptDone);
      try {
        return await attemptDone;
      } catch (e) {
        if (e instanceof ClickHouseStoppedError) throw e;
        const reason = transientReason(e, statuses.get(queryId));
        if (stopping || !retryable || attempt > retries || reason === undefined) throw new ClickHouseQueryError(queryId, e, attempt);
        const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
        const delayMs = Math.round(backoff / 2 + (Math.random() * backoff) / 2);
        // Ids and codes only: the SQL, its parameters and the server's message stay out of logs.
        log.warn('ClickHouse statement failed, retrying', { query_id: queryId, reason, attempt, max_attempts: retries + 1, delay_ms: delayMs });
        await sleep(delayMs);
      } finally {
        statuses.delete(queryId);
        running.delete(queryId);
      }
    }
  };

  return {
    query: <T>(sql: string, params: Params = {}, settings?: ClickHouseSettings) =>
      wrap(true, async (query_id) => {
        // 64-bit integers as JSON numbers, on every query (see insert for why explicit).
        const clickhouse_settings: ClickHouseSettings = { output_format_json_quote_64bit_integers: 0, ...perStatement(query_id), ...settings };
        const rs = await onClient(query_id, bindsValues(params), (client) => client.query({ query: sql, query_params: params, format: 'JSONEachRow', query_id, clickhouse_settings }));
        // Parsed once the statement has left the line of bound statements (the embedded
        // engine holds the whole output by then): the next statement runs meanwhile.
        return rs.json<T>();
      }),
    // Retried only until the stream is handed back: an error while the caller reads it, after
    // part of the answer may have gone on, reaches the caller as the stream's error.
    jsonArray: (sql, columns, params = {}) =>
      wrap(true, (query_id) =>
        template(query_id, sql, params, { format_template_row_format: jsonRowTemplate(columns), format_template_resultset_format: JSON_ARRAY.resultset, format_template_rows_between_delimiter: JSON_ARRAY.between }),
      ),
    jsonLines: (sql, keys, columns, params = {}) =>
      wrap(true, async (query_id) => {
        const stream = await template(query_id, sql, params, { format_template_row_format: keyedRowTemplate(keys, columns), format_template_resultset_format: JSON_LINES.resultset, format_template_rows_between_delimiter: JSON_LINES.between });
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      }),
    queryBinary: <T>(sql: string, params: Params = {}) => wrap(true, async (query_id) => readRowBinary<T>(await binary('RowBinaryWithNamesAndTypes', query_id, sql, params))),
    queryColumns: (sql, params = {}) => wrap(true, async (query_id) => readNativeColumns(await binary('Native', query_id, sql, params))),
    command: (sql, params = {}, opts = {}) =>
      wrap(opts.idempotent === true, async (query_id) => {
        await onClient(query_id, bindsValues(params), (client) => client.command({ query: sql, query_params: params, query_id, clickhouse_settings: perStatement(query_id) }));
      }),
    insert: (table, rows, opts = {}) =>
      wrap(Boolean(opts.dedupToken), async (query_id) => {
        if (rows.length === 0) return;
        // Always both settings, with explicit values: the embedded engine applies settings
        // as SET on its session, so a token left from an earlier insert would otherwise
        // apply to the next one.
        const clickhouse_settings: ClickHouseSettings = {
          ...perStatement(query_id),
          insert_deduplication_token: opts.dedupToken ?? '',
          // ...and keep the materialized views fed by this table from counting it twice.
          deduplicate_blocks_in_dependent_materialized_views: opts.dedupToken ? 1 : 0,
        };
        await onClient(query_id, false, (client) => client.insert({ table, values: insertValues(rows), format: 'JSONEachRow', query_id, clickhouse_settings }));
      }),
    cancel: async (withinMs = 5000) => {
      stopping = true;
      // Again each round: a statement may start in the engine after a KILL was asked (chdb
      // queues bound statements), and a KILL may fail like any statement.
      const rounds = Math.max(1, Math.ceil(withinMs / 250));
      let killer: ClickHouseClient | undefined;
      try {
        for (let round = 0; round < rounds && running.size > 0; round++) {
          killer ??= killerClient(config);
          await killStatements(killer, Boolean(config.clickhouseUrl), [...running.keys()]).catch((e: unknown) => log.warn('KILL QUERY failed', { err: e as Error }));
          await Promise.race([Promise.allSettled([...running.values()]), sleep(250)]);
        }
      } finally {
        await killer?.close();
      }
      if (running.size > 0) log.warn('statements still running after cancel', { query_ids: [...running.keys()].join(',') });
    },
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
