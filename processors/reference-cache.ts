// Which exchanges and pairs exist, for the processors' "unknown pair" check. Refreshed
// periodically and on a miss (at most once a second), so a pair added by a fixture load is
// accepted by the next message.
import type { ReferenceRepository } from '../domain/reference/repository.ts';

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
