// The RFQ deadline keeper (addendum section 8; docs/rfq.md, "Deadlines"): every few seconds
// it closes the open RFQs whose deadline has come and expires the live proposals whose
// valid_until has passed (domain/rfq/deadlines.ts), as new versions written under the
// agreements lock and published by the event relay like any change. The API applies the
// same moves before each RFQ request, so this only makes them happen (and be told) on time
// when nobody asks.
import { AgreementStore } from '../../domain/agreements/store.ts';
import { applyDue } from '../../domain/rfq/deadlines.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';

export interface DeadlineKeeperDeps {
  ch: ClickHouse;
  locks: { with<T>(name: string, fn: () => Promise<T>): Promise<T> };
  log: Logger;
  now: () => number;
}

export class RfqDeadlineKeeper {
  private readonly store: AgreementStore;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: DeadlineKeeperDeps) {
    this.store = new AgreementStore(deps.ch);
  }

  /** Applies the moves due now; the number of records moved. */
  runOnce(): Promise<number> {
    return applyDue({ store: this.store, locks: this.deps.locks }, this.deps.now());
  }

  start(pollMs = 5_000): void {
    const tick = () => {
      this.running = this.running.then(() => this.runOnce()).catch((e: unknown) => this.deps.log.error('RFQ deadline keeper failed', { err: e as Error }));
    };
    this.timer = setInterval(tick, pollMs);
    tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
