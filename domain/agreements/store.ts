// Loans, RFQs and proposals as versioned records (schemas/clickhouse/040_agreements.sql).
// Every change is a new version of the record; a write of several records is one insert,
// so it is whole or absent also across a crash. Writers hold the `agreements` lock
// (lib/locks.ts) while they read, check and write, so two changes of one record
// cannot both pass their checks against the same version.
import crypto from 'node:crypto';
import type { ClickHouse, Params } from '../../lib/clickhouse.ts';

export const AGREEMENT_KINDS = ['loan', 'rfq', 'proposal'] as const;
export type AgreementKind = (typeof AGREEMENT_KINDS)[number];

/** The lock every writer of agreements holds (one: the tables are small, changes rare). */
export const AGREEMENTS_LOCK = 'agreements';

/** One version of a record. `body` holds the kind's own fields (domain/loans, domain/rfq). */
export interface AgreementRecord<B> {
  kind: AgreementKind;
  id: number;
  version: number;
  organization: string;
  market_maker: string;
  asset: string;
  parent: number;
  status: string;
  body: B;
  commit: string;
  changed_at: number;
  changed_by: number;
}

interface Row {
  kind: AgreementKind;
  id: string | number;
  version: number;
  organization: string;
  market_maker: string;
  asset: string;
  parent: string | number;
  status: string;
  body: string;
  commit: string;
  changed_at: string | number;
  changed_by: string | number;
}

const COLUMNS = `kind, id, version, organization, market_maker, asset, parent, status, body, commit,
  toUnixTimestamp64Milli(changed_at) AS changed_at, changed_by`;

function fromRow<B>(r: Row): AgreementRecord<B> {
  return {
    kind: r.kind,
    id: Number(r.id),
    version: Number(r.version),
    organization: r.organization,
    market_maker: r.market_maker,
    asset: r.asset,
    parent: Number(r.parent),
    status: r.status,
    body: JSON.parse(r.body) as B,
    commit: r.commit,
    changed_at: Number(r.changed_at),
    changed_by: Number(r.changed_by),
  };
}

export class AgreementStore {
  constructor(private readonly ch: ClickHouse) {}

  /** The newest version of each record of a kind, optionally one id or the children of one parent, by id. */
  async latest<B>(kind: AgreementKind, where: { id?: number; parent?: number } = {}): Promise<AgreementRecord<B>[]> {
    const params: Params = { kind };
    const conditions = ['kind = {kind:String}'];
    if (where.id !== undefined) {
      params.id = where.id;
      conditions.push('id = {id:UInt64}');
    }
    if (where.parent !== undefined) {
      params.parent = where.parent;
      conditions.push('parent = {parent:UInt64}');
    }
    const rows = await this.ch.query<Row>(
      `SELECT ${COLUMNS} FROM agreements WHERE ${conditions.join(' AND ')} ORDER BY id, version DESC LIMIT 1 BY id`,
      params,
    );
    return rows.map((r) => fromRow<B>(r));
  }

  async one<B>(kind: AgreementKind, id: number): Promise<AgreementRecord<B> | undefined> {
    return (await this.latest<B>(kind, { id }))[0];
  }

  /** Every version of one record, oldest first. */
  async versions<B>(kind: AgreementKind, id: number): Promise<AgreementRecord<B>[]> {
    const rows = await this.ch.query<Row>(`SELECT ${COLUMNS} FROM agreements WHERE kind = {kind:String} AND id = {id:UInt64} ORDER BY version`, { kind, id });
    return rows.map((r) => fromRow<B>(r));
  }

  /** The largest id of a kind ever written, for the id allocator's floor. */
  async maxId(kind: AgreementKind): Promise<number> {
    const rows = await this.ch.query<{ id: string | number }>('SELECT max(id) AS id FROM agreements WHERE kind = {kind:String}', { kind });
    return Number(rows[0]?.id ?? 0);
  }

  /** Writes new versions of one or more records in one insert: all of them or none. */
  async write(records: readonly AgreementRecord<unknown>[]): Promise<void> {
    if (records.length === 0) return;
    const rows = records.map((r) => ({ ...r, body: JSON.stringify(r.body) }));
    // A retried insert is dropped by its token; were it written twice, readers take one row per version.
    await this.ch.insert('agreements', rows, { dedupToken: crypto.randomUUID() });
  }

  /** Versions written since `since` (ms), oldest first: what the event relay publishes. */
  async changedSince(since: number, sentChannel: string): Promise<AgreementRecord<unknown>[]> {
    const rows = await this.ch.query<Row>(
      `SELECT ${COLUMNS} FROM agreements
       WHERE changed_at >= fromUnixTimestamp64Milli({since:Int64})
         AND concat(toString(kind), ':', toString(id), ':', toString(version)) NOT IN
           (SELECT event_id FROM notifications_sent WHERE channel = {channel:String} AND sent_at >= fromUnixTimestamp64Milli({since:Int64}))
       ORDER BY changed_at, kind, id, version`,
      { since, channel: sentChannel },
    );
    return rows.map((r) => fromRow(r));
  }
}

/** The event id of a record's version: the same on every publish of it, so consumers drop repeats. */
export const eventIdOf = (r: Pick<AgreementRecord<unknown>, 'kind' | 'id' | 'version'>): string => `${r.kind}:${r.id}:${r.version}`;
