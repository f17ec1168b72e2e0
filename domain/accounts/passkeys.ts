// WebAuthn credentials (passkeys). Removal writes a new version of the row with
// deleted_at; the signature counter after each sign-in goes to passkey_counters, so a
// sign-in never rewrites (or brings back) the passkey's own row.
import type { ClickHouse } from '../../lib/clickhouse.ts';

export interface Passkey {
  id: number;
  userId: number;
  /** base64url, as the authenticator reports it. */
  credentialId: string;
  /** base64url COSE public key. */
  publicKey: string;
  name: string;
  transports: string[];
  createdAt: number;
  counter: number;
  lastUsedAt: number | null;
}

type Row = {
  id: string | number;
  user_id: string | number;
  credential_id: string;
  public_key: string;
  name: string;
  transports: string[];
  created_ms: string | number;
  counter: string | number | null;
  used_ms: string | number | null;
};

// Constant SQL fragments shared by the queries below; every value is bound as {name:Type}.
const SELECT = `SELECT p.id AS id, p.user_id AS user_id, p.credential_id AS credential_id, p.public_key AS public_key, p.name AS name,
  p.transports AS transports, toUnixTimestamp64Milli(p.created_at) AS created_ms, c.counter AS counter,
  toUnixTimestamp64Milli(c.used_at) AS used_ms`;
// The latest counter of the passkeys `ids` selects (a subquery over passkeys), joined as `c`.
const countersOf = (ids: string) =>
  `LEFT JOIN (SELECT passkey_id, counter, used_at FROM passkey_counters FINAL WHERE passkey_id IN (${ids})) AS c ON c.passkey_id = p.id`;
const SETTINGS = { join_use_nulls: 1 } as const;

const toPasskey = (r: Row): Passkey => ({
  id: Number(r.id),
  userId: Number(r.user_id),
  credentialId: r.credential_id,
  publicKey: r.public_key,
  name: r.name,
  transports: r.transports,
  createdAt: Number(r.created_ms),
  counter: Number(r.counter ?? 0),
  lastUsedAt: r.used_ms === null ? null : Number(r.used_ms),
});

export class PasskeyRepository {
  constructor(private readonly ch: ClickHouse) {}

  async maxId(): Promise<number> {
    const rows = await this.ch.query<{ max: string | number }>('SELECT max(id) AS max FROM passkeys');
    return Number(rows[0]?.max ?? 0);
  }

  async insert(p: Omit<Passkey, 'counter' | 'lastUsedAt'>, counter: number): Promise<void> {
    await this.ch.insert('passkeys', [
      {
        id: p.id,
        user_id: p.userId,
        credential_id: p.credentialId,
        public_key: p.publicKey,
        name: p.name,
        transports: p.transports,
        created_at: p.createdAt,
        deleted_at: null,
        updated_at: Date.now(),
      },
    ]);
    // The counter the authenticator reported at registration; registering is not a use.
    await this.ch.insert('passkey_counters', [{ passkey_id: p.id, counter, used_at: null }]);
  }

  async listForUser(userId: number): Promise<Passkey[]> {
    const rows = await this.ch.query<Row>(
      `${SELECT} FROM (SELECT * FROM passkeys FINAL WHERE user_id = {user:UInt64} AND deleted_at IS NULL) AS p
       ${countersOf('SELECT id FROM passkeys WHERE user_id = {user:UInt64}')} ORDER BY p.id`,
      { user: userId },
      SETTINGS,
    );
    return rows.map(toPasskey);
  }

  /** The live passkey with this credential id, whoever owns it. */
  async byCredentialId(credentialId: string): Promise<Passkey | undefined> {
    const rows = await this.ch.query<Row>(
      `${SELECT} FROM (SELECT * FROM passkeys FINAL WHERE credential_id = {cred:String} AND deleted_at IS NULL) AS p
       ${countersOf('SELECT id FROM passkeys WHERE credential_id = {cred:String}')} LIMIT 1`,
      { cred: credentialId },
      SETTINGS,
    );
    return rows[0] && toPasskey(rows[0]);
  }

  async byIdForUser(id: number, userId: number): Promise<Passkey | undefined> {
    const rows = await this.ch.query<Row>(
      `${SELECT} FROM (SELECT * FROM passkeys FINAL WHERE id = {id:UInt64} AND user_id = {user:UInt64} AND deleted_at IS NULL) AS p
       ${countersOf('SELECT {id:UInt64}')}`,
      { id, user: userId },
      SETTINGS,
    );
    return rows[0] && toPasskey(rows[0]);
  }

  async remove(id: number, at: number): Promise<void> {
    await this.ch.command(
      `INSERT INTO passkeys
       SELECT * REPLACE (fromUnixTimestamp64Milli({at:Int64}, 'UTC') AS deleted_at, fromUnixTimestamp64Milli({version:Int64}, 'UTC') AS updated_at)
       FROM (SELECT * FROM passkeys FINAL WHERE id = {id:UInt64} AND deleted_at IS NULL)`,
      { id, at, version: Date.now() },
    );
  }

  async recordUse(id: number, counter: number, at: number): Promise<void> {
    await this.ch.insert('passkey_counters', [{ passkey_id: id, counter, used_at: at }]);
  }
}
