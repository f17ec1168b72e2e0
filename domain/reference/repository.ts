// Exchanges, organizations, assets, pairs, coverage and wallets. Reads use FINAL so an
// upsert from a fixture load is visible to the next request.
import type { ClickHouse } from '../../lib/clickhouse.ts';
import { SHARED_READS, SharedReads, type SharedReadsOptions } from '../../lib/shared-reads.ts';

export interface Exchange { slug: string; name: string; icon_url: string; region: string }
export interface Organization { slug: string; name: string; kind: 'project' | 'market_maker' }
export interface Asset { symbol: string; name: string; owner: string; labels: string[] }
export interface Pair { exchange: string; pair: string; asset: string; market_type: 'spot' | 'perp' }
export interface Coverage { organization: string; asset: string; exchanges: string[]; pairs: string[] }
export interface Wallet { id: number; organization: string; number: number; exchange: string }

export class ReferenceRepository {
  constructor(private readonly ch: ClickHouse) {}

  exchanges(): Promise<Exchange[]> {
    return this.ch.query<Exchange>('SELECT slug, name, icon_url, region FROM exchanges FINAL ORDER BY slug');
  }

  organizations(): Promise<Organization[]> {
    return this.ch.query<Organization>('SELECT slug, name, kind FROM organizations FINAL ORDER BY slug');
  }

  assets(): Promise<Asset[]> {
    return this.ch.query<Asset>('SELECT symbol, name, owner, labels FROM assets FINAL ORDER BY symbol');
  }

  pairs(): Promise<Pair[]> {
    return this.ch.query<Pair>('SELECT exchange, pair, asset, market_type FROM pairs FINAL ORDER BY exchange, pair');
  }

  coverage(): Promise<Coverage[]> {
    return this.ch.query<Coverage>('SELECT organization, asset, exchanges, pairs FROM coverage FINAL ORDER BY organization, asset');
  }

  async wallets(): Promise<Wallet[]> {
    const rows = await this.ch.query<Wallet & { id: string | number }>(
      'SELECT id, organization, number, exchange FROM wallets FINAL ORDER BY id',
    );
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  /**
   * A stamp of the tables the reference lists are read from (REFERENCE_LIST_TABLES): their
   * active parts. Every insert, merge or mutation makes new parts, so an equal stamp means
   * the same rows, and reading it costs the same at any count of pairs.
   */
  async listsStamp(): Promise<string> {
    const rows = await this.ch.query<{ stamp: string }>(
      `SELECT concat(toString(count()), ':', toString(sum(cityHash64(table, name)))) AS stamp
       FROM system.parts WHERE database = currentDatabase() AND active AND table IN {tables:Array(String)}`,
      { tables: [...REFERENCE_LIST_TABLES] },
    );
    return rows[0]?.stamp ?? '';
  }

  /** Organizations' Telegram chats (fixture `telegram_chat_id`), of those that have one. */
  async telegramChats(): Promise<Map<string, string>> {
    const rows = await this.ch.query<{ slug: string; chat: string }>("SELECT slug, telegram_chat_id AS chat FROM organizations FINAL WHERE telegram_chat_id != ''");
    return new Map(rows.map((r) => [r.slug, r.chat]));
  }

  async upsert(rows: {
    exchanges: Exchange[];
    organizations: (Organization & { telegram_chat_id?: string })[];
    assets: Asset[];
    pairs: Pair[];
    coverage: Coverage[];
    wallets: Wallet[];
  }): Promise<void> {
    const updated_at = Date.now();
    const stamp = <T extends object>(list: T[]) => list.map((r) => ({ ...r, updated_at }));
    // Order matters only for readers that race the load: referenced rows land first.
    await this.ch.insert('exchanges', stamp(rows.exchanges));
    await this.ch.insert('organizations', stamp(rows.organizations));
    await this.ch.insert('assets', stamp(rows.assets));
    await this.ch.insert('pairs', stamp(rows.pairs));
    await this.ch.insert('coverage', stamp(rows.coverage));
    await this.ch.insert('wallets', stamp(rows.wallets));
  }
}

/** The tables ReferenceSnapshot reads its lists from. */
export const REFERENCE_LIST_TABLES = ['assets', 'exchanges', 'pairs', 'organizations', 'coverage'] as const;

export interface ReferenceLists {
  assets: readonly Asset[];
  exchanges: readonly Exchange[];
  pairs: readonly Pair[];
  /** Every organization, by slug. */
  organizations: readonly Organization[];
  /** Every coverage row, by organization and asset. */
  coverage: readonly Coverage[];
}

/**
 * The reference lists requests read (assets, exchanges, pairs, organizations, coverage),
 * shared by the requests of this process (lib/shared-reads.ts; by default refreshed in the
 * background after 2 s, never served older than 10 s): reading them cost every request a
 * query. A fixture load through this process drops them at once (invalidate); other API
 * processes on the same ClickHouse server see a load within the maximum age. The lists are
 * frozen: callers share them.
 *
 * A refresh reads the tables' stamp first and the lists only when it changed, so unchanged
 * lists keep their identity, and what is computed from them (each caller's scope) is kept
 * too. Reading every row every 2 s cost more at every count of pairs, on the requests' line
 * of statements (docs/benchmarks.md, "Measurements behind the code").
 */
export class ReferenceSnapshot {
  private readonly reads: SharedReads<'lists', ReferenceLists>;
  /** The lists last read, with the stamp read just before them. */
  private kept: { stamp: string; lists: ReferenceLists } | undefined;

  constructor(repo: ReferenceRepository, opts: Partial<SharedReadsOptions> = {}) {
    const freeze = <T extends object>(rows: T[]): readonly T[] => Object.freeze(rows.map((r) => Object.freeze(r)));
    this.reads = new SharedReads(
      async () => {
        // The stamp before the rows: a write landing between them (a fixture load, also one
        // that invalidates meanwhile) changes the next stamp, so rows are never kept under a
        // stamp newer than they are. Without a stamp (a
        // server user who may not read system.parts), every refresh reads the rows.
        const stamp = await repo.listsStamp().catch(() => undefined);
        if (stamp !== undefined && this.kept?.stamp === stamp) return this.kept.lists;
        const [assets, exchanges, pairs, organizations, coverage] = await Promise.all([repo.assets(), repo.exchanges(), repo.pairs(), repo.organizations(), repo.coverage()]);
        const lists = { assets: freeze(assets), exchanges: freeze(exchanges), pairs: freeze(pairs), organizations: freeze(organizations), coverage: freeze(coverage) };
        this.kept = stamp === undefined ? undefined : { stamp, lists };
        return lists;
      },
      { ...SHARED_READS, ...opts },
    );
  }

  lists(): Promise<ReferenceLists> {
    return this.reads.get('lists');
  }

  invalidate(): void {
    this.kept = undefined;
    this.reads.invalidate();
  }
}
