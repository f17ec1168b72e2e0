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

export class Faults {
  private readonly at = new Map<string, number>();
  private readonly seen = new Map<string, number>();

  constructor(spec: string[] = [], private readonly ch?: ClickHouse) {
    for (const s of spec) {
      const [point, n] = s.split(':') as [string, string];
      this.at.set(point, Number(n));
    }
  }

  /** Runs the stall statement the n-th time a point is reached, when asked to; its error (a cancel) is the caller's. */
  async stall(point: FaultPoint): Promise<void> {
    if (this.at.size === 0 || !this.ch) return;
    const key = `stall-${point}`;
    const n = (this.seen.get(key) ?? 0) + 1;
    this.seen.set(key, n);
    if (this.at.get(key) !== n) return;
    process.stderr.write(`fault injection: stalling at ${point} #${n}\n`);
    await this.ch.command(STALL_SQL);
  }

  hit(point: FaultPoint): void {
    if (this.at.size === 0) return;
    const n = (this.seen.get(point) ?? 0) + 1;
    this.seen.set(point, n);
    if (this.at.get(point) === n) {
      process.stderr.write(`fault injection: SIGKILL at ${point} #${n}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  }
}

export const noFaults = new Faults();
