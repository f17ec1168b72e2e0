// Which pairs and wallets exist, for the processors' "unknown pair" and "unknown wallet"
// checks. Refreshed periodically and on a miss (at most once a second), so a pair added by
// a fixture load is accepted by the next message.
import type { ReferenceRepository, Wallet } from '../domain/reference/repository.ts';
import { deadLetter, ok, type Outcome } from './shell/outcome.ts';

/**
 * Reference rows by key, loaded whole: answered from memory while fresh, loaded again when
 * older than maxAgeMs, or on a miss once a second has passed since the last load.
 */
class ReferenceCache<V> {
  private byKey = new Map<string, V>();
  private loadedAt = 0;
  private loading: Promise<void> | undefined;
  /** Times loaded: a copy elsewhere (a helper thread's) is stale when this moved on. */
  loads = 0;

  constructor(
    private readonly load: () => Promise<[string, V][]>,
    private readonly now: () => number,
    private readonly maxAgeMs: number,
  ) {}

  /** Synchronous while the cache is fresh enough to answer (every message but a few). */
  get(key: string): V | undefined | Promise<V | undefined> {
    const value = this.byKey.get(key);
    const age = this.now() - this.loadedAt;
    if (age > this.maxAgeMs || (value === undefined && age > 1000)) return this.refresh().then(() => this.byKey.get(key));
    return value;
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  refresh(): Promise<void> {
    this.loading ??= this.load()
      .then((entries) => {
        this.byKey = new Map(entries);
        this.loadedAt = this.now();
        this.loads++;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}

export class KnownPairs {
  private readonly cache: ReferenceCache<true>;

  constructor(reference: ReferenceRepository, now: () => number, maxAgeMs = 30_000) {
    this.cache = new ReferenceCache(async () => (await reference.pairs()).map((r) => [KnownPairs.key(r.exchange, r.pair), true]), now, maxAgeMs);
  }

  static key(exchange: string, pair: string): string {
    return `${exchange}:${pair}`;
  }

  has(exchange: string, pair: string): boolean | Promise<boolean> {
    const known = this.cache.get(KnownPairs.key(exchange, pair));
    return known instanceof Promise ? known.then((k) => k === true) : known === true;
  }

  refresh(): Promise<void> {
    return this.cache.refresh();
  }

  /** Times loaded (a copy of the keys is stale when this moved on), and every pair's key as loaded. */
  get loads(): number {
    return this.cache.loads;
  }

  keys(): string[] {
    return this.cache.keys();
  }
}

/** The wallets of the fixture, for the market makers' processors. */
export class KnownWallets {
  private readonly cache: ReferenceCache<Wallet>;

  constructor(reference: ReferenceRepository, now: () => number, maxAgeMs = 30_000) {
    this.cache = new ReferenceCache(async () => (await reference.wallets()).map((w) => [String(w.id), w]), now, maxAgeMs);
  }

  get(id: number): Wallet | undefined | Promise<Wallet | undefined> {
    return this.cache.get(String(id));
  }

  refresh(): Promise<void> {
    return this.cache.refresh();
  }
}

/** Whether a market maker's message names a wallet of its organization on its exchange (addendum section 1). */
export function walletCheck(wallets: KnownWallets): (msg: { organization: string; wallet_id: number; exchange: string }) => Outcome<void> | Promise<Outcome<void>> {
  const judge = (msg: { organization: string; wallet_id: number; exchange: string }, w: Wallet | undefined): Outcome<void> => {
    if (!w) return deadLetter(`unknown wallet: ${msg.wallet_id}`);
    if (w.organization !== msg.organization) return deadLetter(`wallet ${msg.wallet_id} is not of organization ${msg.organization}`);
    if (w.exchange !== msg.exchange) return deadLetter(`wallet ${msg.wallet_id} is on ${w.exchange}, not ${msg.exchange}`);
    return ok(undefined);
  };
  return (msg) => {
    const w = wallets.get(msg.wallet_id);
    return w instanceof Promise ? w.then((x) => judge(msg, x)) : judge(msg, w);
  };
}
