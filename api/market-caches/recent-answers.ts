// Answers of market requests shared by identical requests for a moment. Dashboards ask the
// same rolling windows again and again; without this, fifty clients on one window computed
// its open minutes fifty times (docs/benchmarks.md, bench:load). A request
// joins the computation of an identical one begun less than `reuseMs` ago, in flight or
// done, so an answer is never older than that: the documented freshness of an open window
// (at most a second, docs/architecture.md). Identical means the same endpoint, the same
// normalized parameters and the same visibility (the caller's staff flag, assets and
// pairs): a caller never receives an answer computed for what another may see.

export interface Answer {
  status: number;
  /** Content-Type. */
  type: string;
  /** Headers the handler set besides Content-Type (CSV's Content-Disposition). */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RecentAnswersOptions {
  /** How long after it began a computation's answer is shared; 0 turns sharing off. At most 1000. */
  reuseMs: number;
  /** The service's clock. */
  now: () => number;
  /** Answers kept at most (the oldest go first); a bound for many distinct requests in one moment. */
  maxEntries?: number;
}

interface Entry {
  at: number;
  answer: Promise<Answer>;
}

/** The upper bound of reuseMs: an open window's answer is at most this old. */
export const MAX_REUSE_MS = 1_000;

export class RecentAnswers {
  private readonly entries = new Map<string, Entry>();
  /** Requests answered by another's computation, and computations run, for tests and operators. */
  shared = 0;
  computed = 0;

  constructor(private readonly opts: RecentAnswersOptions) {
    if (!(opts.reuseMs >= 0 && opts.reuseMs <= MAX_REUSE_MS)) throw new Error(`reuseMs must be within 0..${MAX_REUSE_MS}`);
  }

  get enabled(): boolean {
    return this.opts.reuseMs > 0;
  }

  /** The answer of an identical request begun less than reuseMs ago, or `compute`'s. A failure is not kept. */
  get(key: string, compute: () => Promise<Answer>): Promise<Answer> {
    if (!this.enabled) {
      this.computed++;
      return compute();
    }
    const now = this.opts.now();
    this.sweep(now);
    const entry = this.entries.get(key);
    if (entry && now - entry.at < this.opts.reuseMs) {
      this.shared++;
      return entry.answer;
    }
    this.computed++;
    const fresh: Entry = { at: now, answer: compute() };
    this.entries.delete(key);
    this.entries.set(key, fresh);
    fresh.answer.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    const max = this.opts.maxEntries ?? 10_000;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= max) break;
      this.entries.delete(oldest);
    }
    return fresh.answer;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops answers too old to share; entries are in the order they began. */
  private sweep(now: number): void {
    for (const [key, e] of this.entries) {
      if (now - e.at < this.opts.reuseMs) break;
      this.entries.delete(key);
    }
  }
}
