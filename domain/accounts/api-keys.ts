// Scoped API keys. Only the SHA-256 of a key is stored; the prefix (the key's first
// characters) finds the row. Revocation writes a new version of the row; the last use is
// kept apart in api_key_usage, so recording a use never rewrites the key's own row.
import type { ClickHouse } from '../../lib/clickhouse.ts';

export interface ApiKeyRecord {
  id: number;
  userId: number;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

/** What authenticating a request needs. */
export interface ApiKeyCredential {
  id: number;
  userId: number;
  keyHash: string;
  scopes: string[];
  expiresAt: number;
  revoked: boolean;
}

export interface NewApiKey {
  id: number;
  userId: number;
  name: string;
  prefix: string;
  keyHash: string;
  scopes: string[];
  createdAt: number;
  expiresAt: number;
}

type Row = {
  id: string | number;
  user_id: string | number;
  name: string;
  prefix: string;
  scopes: string[];
  created_ms: string | number;
  expires_ms: string | number;
  revoked_ms: string | number | null;
  used_ms: string | number | null;
};

// Constant SQL fragments shared by the queries below; every value is bound as {name:Type}.
const COLUMNS = `k.id AS id, k.user_id AS user_id, k.name AS name, k.prefix AS prefix, k.scopes AS scopes,
  toUnixTimestamp64Milli(k.created_at) AS created_ms, toUnixTimestamp64Milli(k.expires_at) AS expires_ms,
  toUnixTimestamp64Milli(k.revoked_at) AS revoked_ms, toUnixTimestamp64Milli(u.last_used_at) AS used_ms`;
// The last use of the keys `keys` selects (a subquery over api_keys), joined as `u`.
const usageOf = (keys: string) =>
  `LEFT JOIN (SELECT key_id, max(last_used_at) AS last_used_at FROM api_key_usage WHERE key_id IN (${keys}) GROUP BY key_id) AS u ON u.key_id = k.id`;
// Without it, a key never used would read as used at 1970-01-01.
const SETTINGS = { join_use_nulls: 1 } as const;

const msOrNull = (v: string | number | null) => (v === null ? null : Number(v));
const toRecord = (r: Row): ApiKeyRecord => ({
  id: Number(r.id),
  userId: Number(r.user_id),
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes,
  createdAt: Number(r.created_ms),
  expiresAt: Number(r.expires_ms),
  revokedAt: msOrNull(r.revoked_ms),
  lastUsedAt: msOrNull(r.used_ms),
});

export class ApiKeyRepository {
  constructor(private readonly ch: ClickHouse) {}

  async maxId(): Promise<number> {
    const rows = await this.ch.query<{ max: string | number }>('SELECT max(id) AS max FROM api_keys');
    return Number(rows[0]?.max ?? 0);
  }

  async insert(k: NewApiKey): Promise<void> {
    await this.ch.insert('api_keys', [
      {
        id: k.id,
        user_id: k.userId,
        name: k.name,
        prefix: k.prefix,
        key_hash: k.keyHash,
        scopes: k.scopes,
        created_at: k.createdAt,
        expires_at: k.expiresAt,
        revoked_at: null,
        updated_at: Date.now(),
      },
    ]);
  }

  /** The user's keys that were not revoked (expired ones included), oldest first. */
  async listForUser(userId: number): Promise<ApiKeyRecord[]> {
    const rows = await this.ch.query<Row>(
      `SELECT ${COLUMNS} FROM (SELECT * FROM api_keys FINAL WHERE user_id = {user:UInt64} AND revoked_at IS NULL) AS k
       ${usageOf('SELECT id FROM api_keys WHERE user_id = {user:UInt64}')} ORDER BY k.id`,
      { user: userId },
      SETTINGS,
    );
    return rows.map(toRecord);
  }

  /** Keys that count against the limit: neither revoked nor past expires_at. */
  async countActive(userId: number, now: number): Promise<number> {
    const rows = await this.ch.query<{ n: string | number }>(
      `SELECT count() AS n FROM api_keys FINAL
       WHERE user_id = {user:UInt64} AND revoked_at IS NULL AND expires_at > fromUnixTimestamp64Milli({now:Int64}, 'UTC')`,
      { user: userId, now },
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Every key with this prefix (normally one), with the hash to compare. */
  async byPrefix(prefix: string): Promise<ApiKeyCredential[]> {
    const rows = await this.ch.query<{
      id: string | number;
      user_id: string | number;
      key_hash: string;
      scopes: string[];
      expires_ms: string | number;
      revoked: boolean | number;
    }>(
      `SELECT id, user_id, key_hash, scopes, toUnixTimestamp64Milli(expires_at) AS expires_ms, revoked_at IS NOT NULL AS revoked
       FROM api_keys FINAL WHERE prefix = {prefix:String}`,
      { prefix },
    );
    return rows.map((r) => ({
      id: Number(r.id),
      userId: Number(r.user_id),
      keyHash: r.key_hash,
      scopes: r.scopes,
      expiresAt: Number(r.expires_ms),
      revoked: Boolean(Number(r.revoked)),
    }));
  }

  async byIdForUser(id: number, userId: number): Promise<ApiKeyRecord | undefined> {
    const rows = await this.ch.query<Row>(
      `SELECT ${COLUMNS} FROM (SELECT * FROM api_keys FINAL WHERE id = {id:UInt64} AND user_id = {user:UInt64}) AS k
       ${usageOf('SELECT {id:UInt64}')}`,
      { id, user: userId },
      SETTINGS,
    );
    return rows[0] && toRecord(rows[0]);
  }

  /**
   * Marks the key revoked: a new version of its row, everything else unchanged. (The filter
   * sits in a subquery: in the outer WHERE, revoked_at would mean the REPLACE expression.)
   */
  async revoke(id: number, at: number): Promise<void> {
    await this.ch.command(
      `INSERT INTO api_keys
       SELECT * REPLACE (fromUnixTimestamp64Milli({at:Int64}, 'UTC') AS revoked_at, fromUnixTimestamp64Milli({version:Int64}, 'UTC') AS updated_at)
       FROM (SELECT * FROM api_keys FINAL WHERE id = {id:UInt64} AND revoked_at IS NULL)`,
      { id, at, version: Date.now() },
    );
  }

  async recordUse(id: number, at: number): Promise<void> {
    await this.ch.insert('api_key_usage', [{ key_id: id, last_used_at: at }]);
  }
}
