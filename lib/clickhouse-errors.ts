// The ClickHouse gateway's errors (lib/clickhouse.ts), apart from the module that loads chdb.

/** A statement asked for after cancel(): the connection is stopping. */
export class ClickHouseStoppedError extends Error {
  constructor(readonly queryId: string) {
    super(`ClickHouse statement ${queryId} refused: the connection is stopping`);
    this.name = 'ClickHouseStoppedError';
  }
}

export class ClickHouseQueryError extends Error {
  /** queryId is the last attempt's; attempts counts them all. */
  constructor(readonly queryId: string, cause: unknown, readonly attempts = 1) {
    super(`ClickHouse query ${queryId} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'ClickHouseQueryError';
  }
}
