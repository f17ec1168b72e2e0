// Which exchanges, pairs and wallets exist, for the processors' "unknown pair" and
// "unknown wallet" checks. Refreshed
// periodically and on a miss (at most once a second), so a pair added by a fixture load is
// accepted by the next message.
import type { ReferenceRepository, Wallet } from '../domain/reference/repository.ts';
import { deadLetter, ok, type Outcome } from './shell/outcome.ts';

export class KnownPairs {
  private pairs = new Set<string>();
  private loadedAt = 0;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly reference: ReferenceRepository,
    private readonly now: () => number,
    private readonly maxAgeMs = 30_000,
  ) {}

  static key(exchange: string, pair: string): string {
    return `${exchange}:${pair}`;
  }

  /** Synchronous while the cache is fresh enough to answer (every message but a few). */
  has(exchange: string, pair: string): boolean | Promise<boolean> {
    const key = KnownPairs.key(exchange, pair);
    const known = this.pairs.has(key);
    const age = this.now() - this.loadedAt;
    if (age > this.maxAgeMs || (!known && age > 1000)) return this.refresh().then(() => this.pairs.has(key));
    return known;
  }

  refresh(): Promise<void> {
    this.loading ??= this.reference
      .pairs()
      .then((rows) => {
        this.pairs = new Set(rows.map((r) => KnownPairs.key(r.exchange, r.pair)));
        this.loadedAt = this.now();
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}

/** The wallets of the fixture, for the market makers' processors: refreshed as KnownPairs. */
export class KnownWallets {
  private wallets = new Map<number, Wallet>();
  private loadedAt = 0;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly reference: ReferenceRepository,
    private readonly now: () => number,
    private readonly maxAgeMs = 30_000,
  ) {}

  get(id: number): Wallet | undefined | Promise<Wallet | undefined> {
    const wallet = this.wallets.get(id);
    const age = this.now() - this.loadedAt;
    if (age > this.maxAgeMs || (!wallet && age > 1000)) return this.refresh().then(() => this.wallets.get(id));
    return wallet;
  }

  refresh(): Promise<void> {
    this.loading ??= this.reference
      .wallets()
      .then((rows) => {
        this.wallets = new Map(rows.map((w) => [w.id, w]));
        this.loadedAt = this.now();
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
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
