// The shell of the service's periodic jobs (the loan keeper, the RFQ deadline keeper, the
// target evaluator, the agreements event relay): run once at start, then every `everyMs`,
// one run at a time (a tick that comes during a run is skipped, so a slow run neither
// overlaps the next nor leaves a queue of them), a failed run logged and tried again at the
// next tick, and `stop` waits for the run in progress.
import type { Logger } from '../../lib/log.ts';

export interface PolledJob {
  /** What the log calls the job when a run fails. */
  readonly name: string;
  runOnce(): Promise<unknown>;
}

export class Poller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly job: PolledJob,
    private readonly log: Logger,
  ) {}

  start(everyMs: number): void {
    if (this.timer) return;
    const tick = () => {
      if (this.running) return;
      let run: Promise<unknown>;
      try {
        run = this.job.runOnce();
      } catch (e) {
        run = Promise.reject(e);
      }
      this.running = run
        .catch((e: unknown) => this.log.error(`${this.job.name} failed`, { err: e as Error }))
        .finally(() => (this.running = undefined));
    };
    this.timer = setInterval(tick, everyMs);
    tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
