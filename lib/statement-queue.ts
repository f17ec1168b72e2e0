// The embedded engine (chdb) runs the statements that bind values one at a time across the
// process, in the order they are asked: its binding of parameters is shared state that
// statements running side by side would clobber. Every statement of this service binds its
// values, so the API's and the processors' statements share that one line, and ClickHouse's
// `priority` setting, which ranks statements running together, never applies. Asked in
// arrival order, a request waited behind whatever the processors had queued: at thousands
// of pairs a minute close queues long rollups and writes (docs/benchmarks.md,
// "Measurements behind the code"). This queue hands the engine one bound statement at a
// time and picks the most urgent waiting one (lowest priority number, arrival order among
// equals), so a request waits at most for the statement running. One that has waited
// `maxWaitMs` goes first whatever its priority: ingestion keeps moving under steady load.

export interface StatementQueueOptions {
  /** A waiting statement older than this goes before more urgent ones (ms). */
  maxWaitMs: number;
  /** A monotonic clock (ms); the wait bound is the only thing measured with it. */
  now?: () => number;
}

/** One statement's turn in the line (ms): how long it waited for it and how long it held the line. */
export interface Turn {
  priority: number;
  waitedMs: number;
  heldMs: number;
}

interface Waiter {
  priority: number;
  since: number;
  go: () => void;
}

export class StatementQueue {
  private busy = false;
  /** In arrival order. */
  private readonly waiting: Waiter[] = [];
  private readonly now: () => number;
  private readonly watchers = new Set<(turn: Turn) => void>();

  constructor(private readonly opts: StatementQueueOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** Runs `statement` when its turn comes: alone, after the more urgent statements waiting. */
  async run<T>(priority: number, statement: () => Promise<T>): Promise<T> {
    const asked = this.now();
    if (this.busy) await new Promise<void>((go) => this.waiting.push({ priority, since: asked, go }));
    else this.busy = true;
    const began = this.now();
    try {
      return await statement();
    } finally {
      this.next();
      if (this.watchers.size > 0) this.report({ priority, waitedMs: began - asked, heldMs: this.now() - began });
    }
  }

  /** A watcher is a diagnostic: what it throws neither stops the line nor fails the statement. */
  private report(turn: Turn): void {
    for (const w of this.watchers) {
      try {
        w(turn);
      } catch {
        // ignored, see above
      }
    }
  }

  /**
   * Calls `watcher` with every statement's turn as it ends (what bench:api reports: how
   * long requests waited in the line, and how long ingestion held it). Returns what stops it.
   */
  watch(watcher: (turn: Turn) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Statements waiting for their turn. */
  get length(): number {
    return this.waiting.length;
  }

  private next(): void {
    if (this.waiting.length === 0) {
      this.busy = false;
      return;
    }
    let pick = 0;
    if (this.now() - this.waiting[0]!.since < this.opts.maxWaitMs) {
      for (let i = 1; i < this.waiting.length; i++) if (this.waiting[i]!.priority < this.waiting[pick]!.priority) pick = i;
    }
    // The turn passes on without freeing the line in between.
    this.waiting.splice(pick, 1)[0]!.go();
  }
}
