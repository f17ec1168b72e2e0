// Users and their memberships. The password hash is argon2id; it never leaves this module
// except to the code that verifies it.
import type { ClickHouse } from '../../lib/clickhouse.ts';

export interface User {
  id: number;
  email: string;
  username: string;
  first_name: string;
  last_name: string;
  is_staff: boolean;
  is_active: boolean;
}

export interface UserWithHash extends User {
  password_hash: string;
}

/** The user without the password hash: what a request's principal carries. */
export function withoutHash(user: UserWithHash): User {
  const { password_hash: _hidden, ...rest } = user;
  return rest;
}

type Row = Omit<UserWithHash, 'id'> & { id: string | number };
const toUser = (r: Row): UserWithHash => ({ ...r, id: Number(r.id) });

export class UserRepository {
  constructor(private readonly ch: ClickHouse) {}

  async byEmail(email: string): Promise<UserWithHash | undefined> {
    const rows = await this.ch.query<Row>(
      'SELECT id, email, username, password_hash, first_name, last_name, is_staff, is_active FROM users FINAL WHERE lower(email) = lower({email:String}) LIMIT 1',
      { email },
    );
    return rows[0] && toUser(rows[0]);
  }

  async byId(id: number): Promise<UserWithHash | undefined> {
    const rows = await this.ch.query<Row>('SELECT id, email, username, password_hash, first_name, last_name, is_staff, is_active FROM users FINAL WHERE id = {id:UInt64} LIMIT 1', { id });
    return rows[0] && toUser(rows[0]);
  }

  async nextId(): Promise<number> {
    const rows = await this.ch.query<{ next: string | number }>('SELECT max(id) + 1 AS next FROM users');
    return Math.max(1, Number(rows[0]?.next ?? 1));
  }

  async save(user: UserWithHash, created_at = Date.now()): Promise<void> {
    await this.ch.insert('users', [{ ...user, created_at, updated_at: Date.now() }]);
  }

  /** Replaces the user's password hash; every other column (created_at included) is kept. */
  async setPasswordHash(id: number, passwordHash: string): Promise<void> {
    await this.ch.command(
      `INSERT INTO users
       SELECT * REPLACE ({hash:String} AS password_hash, fromUnixTimestamp64Milli({version:Int64}, 'UTC') AS updated_at)
       FROM (SELECT * FROM users FINAL WHERE id = {id:UInt64})`,
      { id, hash: passwordHash, version: Date.now() },
    );
  }

  async memberships(userId: number): Promise<string[]> {
    const rows = await this.ch.query<{ organization: string }>(
      'SELECT organization FROM memberships FINAL WHERE user_id = {id:UInt64} AND active ORDER BY organization',
      { id: userId },
    );
    return rows.map((r) => r.organization);
  }

  /** Makes `organizations` the user's memberships: new ones added, others ended. */
  async setMemberships(userId: number, organizations: string[]): Promise<void> {
    const current = await this.memberships(userId);
    const updated_at = Date.now();
    const rows = [
      ...organizations.map((organization) => ({ user_id: userId, organization, active: true, updated_at })),
      ...current
        .filter((o) => !organizations.includes(o))
        .map((organization) => ({ user_id: userId, organization, active: false, updated_at })),
    ];
    await this.ch.insert('memberships', rows);
  }
}
