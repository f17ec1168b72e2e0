// Two bench:api runs at once, their timed requests in turns (bench:api-scale --interleave).
//
// Runs of two sizes measured one after the other differ by the machine's state as well as
// by the size: a run whose engine was 1.5-1.9x slower throughout decided a whole round
// (docs/benchmarks.md, "Three aligned rounds after the per-pair walks"). Here both sizes'
// services are up at once, idle, and their timed requests alternate one at a time, A, B,
// A, B, so a slow minute of the machine falls on both sides alike. Each run meets the other
// at barriers (a series' start, its timed part, its end), so neither's warm-up or clean-up
// overlaps the other's timed requests.
//
// The child (bench:api --lockstep yes) asks over its IPC channel; the parent answers.
import type { ChildProcess } from 'node:child_process';

/** A child's request to the coordinator. */
type Ask = { lockstep: 'barrier'; name: string } | { lockstep: 'turn' };
/** The coordinator's answer: go on. */
type Go = { lockstep: 'go' };

const isGo = (m: unknown): m is Go => typeof m === 'object' && m !== null && (m as Go).lockstep === 'go';
const isAsk = (m: unknown): m is Ask => typeof m === 'object' && m !== null && ((m as Ask).lockstep === 'barrier' || (m as Ask).lockstep === 'turn');

/** The child's side: each call returns once the coordinator says go. */
export class LockstepChild {
  private waiting: (() => void) | undefined;

  constructor() {
    if (!process.send) throw new Error('--lockstep yes: run by bench:api-scale --interleave, with an IPC channel');
    process.on('message', (m: unknown) => {
      if (!isGo(m)) return;
      const go = this.waiting;
      this.waiting = undefined;
      go?.();
    });
  }

  /** Waits until the other run has reached the barrier of the same name. */
  barrier(name: string): Promise<void> {
    return this.ask({ lockstep: 'barrier', name });
  }

  /** Waits for this run's turn: the other run's request, if any, has ended. */
  turn(): Promise<void> {
    return this.ask({ lockstep: 'turn' });
  }

  private ask(m: Ask): Promise<void> {
    if (this.waiting) throw new Error('lockstep: asked again before the last answer');
    return new Promise((resolve) => {
      this.waiting = resolve;
      process.send!(m);
    });
  }
}

/**
 * The parent's side, for two children. Barriers release both once both have reached the
 * same one. Turns alternate strictly, `first` going first after each barrier; a turn is
 * over when its child asks again. A child at a barrier while the other still has turns
 * (the two timed different counts) lets the other go on alone.
 */
export class LockstepCoordinator {
  private readonly pending: (Ask | undefined)[] = [undefined, undefined];
  private running: number | undefined;
  private next: number;
  private failed: ((e: Error) => void) | undefined;
  /** Rejects when the children disagree or one leaves while the other waits for it. */
  readonly broken: Promise<never>;

  constructor(
    private readonly children: [ChildProcess, ChildProcess],
    private readonly first: 0 | 1,
  ) {
    this.next = first;
    this.broken = new Promise<never>((_, reject) => {
      this.failed = reject;
    });
    // Observed by whoever awaits the runs; unobserved, it must not end the process.
    this.broken.catch(() => undefined);
    children.forEach((c, i) => {
      c.on('message', (m: unknown) => {
        if (isAsk(m)) this.asked(i, m);
      });
      c.once('exit', () => {
        const other = this.pending[1 - i];
        if (other?.lockstep === 'barrier') this.failed?.(new Error(`lockstep: run ${i + 1} ended while run ${2 - i} waited at "${other.name}"`));
      });
    });
  }

  private asked(i: number, m: Ask): void {
    if (this.running === i) this.running = undefined;
    this.pending[i] = m;
    this.dispatch();
  }

  private dispatch(): void {
    const [a, b] = this.pending;
    if (a?.lockstep === 'barrier' && b?.lockstep === 'barrier') {
      if (a.name !== b.name) {
        this.failed?.(new Error(`lockstep: the runs disagree: "${a.name}" and "${b.name}"`));
        return;
      }
      this.pending[0] = this.pending[1] = undefined;
      this.next = this.first;
      this.go(0);
      this.go(1);
      return;
    }
    if (this.running !== undefined) return;
    const other = 1 - this.next;
    const candidate = this.pending[this.next]?.lockstep === 'turn' ? this.next : this.pending[this.next]?.lockstep === 'barrier' && this.pending[other]?.lockstep === 'turn' ? other : undefined;
    if (candidate === undefined) return;
    this.pending[candidate] = undefined;
    this.running = candidate;
    this.next = 1 - candidate;
    this.go(candidate);
  }

  private go(i: number): void {
    this.children[i]!.send({ lockstep: 'go' } satisfies Go);
  }
}
