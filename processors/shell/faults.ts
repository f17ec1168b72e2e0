// Crash points for the exactly-once tests (MM_FAULTS, never set in production): the
// process kills itself with SIGKILL the n-th time it reaches a point, exactly as a power
// cut or an OOM kill would stop it there.
// `award-gap`: an RFQ award between its targets' insert and its records' (domain/rfq/award.ts).
export type FaultPoint = 'before-write' | 'after-write' | 'before-commit' | 'award-gap';

export class Faults {
  private readonly at = new Map<FaultPoint, number>();
  private readonly seen = new Map<FaultPoint, number>();

  constructor(spec: string[] = []) {
    for (const s of spec) {
      const [point, n] = s.split(':') as [FaultPoint, string];
      this.at.set(point, Number(n));
    }
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
