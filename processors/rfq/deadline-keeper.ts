// The RFQ deadline keeper (addendum section 8; docs/rfq.md, "Deadlines"): every few seconds
// it closes the open RFQs whose deadline has come and expires the live proposals whose
// valid_until has passed (domain/rfq/deadlines.ts), as new versions written under the
// agreements lock and published by the event relay like any change. Reads show these moves
// as due before they are written, and a command writes them before it acts, so this makes
// them stored (and told) on time.
import { AgreementStore } from '../../domain/agreements/store.ts';
import { applyDue } from '../../domain/rfq/deadlines.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';
import type { LockSource } from '../../lib/locks.ts';
import type { PolledJob } from '../shell/poller.ts';

export interface DeadlineKeeperDeps {
  ch: ClickHouse;
  locks: LockSource;
  log: Logger;
  now: () => number;
}

/** Run every few seconds by the service's Poller (processors/shell/poller.ts). */
export class RfqDeadlineKeeper implements PolledJob {
  readonly name = 'RFQ deadline keeper';
  private readonly store: AgreementStore;

  constructor(private readonly deps: DeadlineKeeperDeps) {
    this.store = new AgreementStore(deps.ch);
  }

  /** Applies the moves due now; the number of records moved. */
  runOnce(): Promise<number> {
    return applyDue({ store: this.store, locks: this.deps.locks }, this.deps.now());
  }
}
