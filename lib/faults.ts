// Crash points for the exactly-once tests (MM_FAULTS, never set in production): the
// process kills itself with SIGKILL the n-th time it reaches a point, exactly as a power
// cut or an OOM kill would stop it there.
// `award-gap`: an RFQ award between its targets' insert and its records' (domain/rfq/award.ts).
// `stall-<point>:n` instead runs a ClickHouse statement of many minutes there, the n-th
// time, as a slow write would: the shutdown test stops the service in the middle of it.
import type { ClickHouse } from './clickhouse.ts';

export type FaultPoint = 'before-write' | 'after-write' | 'before-commit' | 'award-gap';

/** Minutes of work on two cores, ended only by a KILL; no bound values, so chdb does not queue it behind bound statements. */
const STALL_SQL = 'SELECT count() FROM numbers(1000000000000) WHERE sipHash64(number) % 7 = 0';

/** Every point a spec can name, each with its slot among the counters. */
const KEYS: readonly string[] = (['before-write', 'after-write', 'before-commit', 'award-gap'] as const).flatMap((p) => [p, `stall-${p}`]);

export class Faults {
  private readonly at = new Map<string, number>();
  /** Times each point was reached, in memory a worker thread shares (processors/market/threaded.ts): "the n-th time" counts the process. */
  readonly counters: Int32Array;

  constructor(
    readonly spec: string[] = [],
    private readonly ch?: ClickHouse,
    shared?: SharedArrayBuffer,
  ) {
    for (const s of spec) {
      const [point, n] = s.split(':') as [string, string];
      this.at.set(point, Number(n));
    }
    this.counters = new Int32Array(shared ?? new SharedArrayBuffer(KEYS.length * 4));
  }

  private count(key: string): number {
    return Atomics.add(this.counters, KEYS.indexOf(key), 1) + 1;
  }

  /** Runs the stall statement the n-th time a point is reached, when asked to; its error (a cancel) is the caller's. */
  async stall(point: FaultPoint): Promise<void> {
    if (this.at.size === 0 || !this.ch) return;
    const key = `stall-${point}`;
    const n = this.count(key);
    if (this.at.get(key) !== n) return;
    process.stderr.write(`fault injection: stalling at ${point} #${n}\n`);
    await this.ch.command(STALL_SQL);
  }

  hit(point: FaultPoint): void {
    if (this.at.size === 0) return;
    const n = this.count(point);
    if (this.at.get(point) === n) {
      process.stderr.write(`fault injection: SIGKILL at ${point} #${n}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  }
}

export const noFaults = new Faults();
