// The service's own moves on loans (addendum section 7; docs/loans.md), run every few
// seconds in the service: an active loan whose last tranche has expired moves to
// `settlement_due`, and a `twap_premium` tranche's strike is fixed once the 7 days after
// its disbursement have passed and their minutes are all written (that TWAP x (1 +
// premium_pct/100)); a `start_twap` recorded before its days' minutes were all written is
// recorded again once they are. Each is a new version
// of the loan, written under the agreements lock (so it cannot interleave with an action),
// and published by the event relay like any change. A strike whose days had no market data
// stays null and is tried again on the next run. The KPI targets an RFQ award made with an
// active loan are switched on if the activation did not finish doing so.
import { AGREEMENTS_LOCK, AgreementStore } from '../../domain/agreements/store.ts';
import { settlementDue } from '../../domain/loans/actions.ts';
import { loanOf, loanRecord, startTwapDue, startTwapWindow, strikeDue, strikeWindow, type Loan, type LoanRecord } from '../../domain/loans/loan.ts';
import { sealedBefore } from '../../domain/market/window.ts';
import { assetTwap } from '../../domain/market/prices.ts';
import { activateAwardTargets, awardTargetsDue } from '../../domain/loans/award-targets.ts';
import { TargetRepository } from '../../domain/targets/repository.ts';
import type { Pair } from '../../domain/reference/repository.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';
import type { RolledUp } from '../../domain/market/repositories/rollup-marks.ts';
import type { LockSource } from '../../lib/locks.ts';
import type { PolledJob } from '../shell/poller.ts';

export interface KeeperDeps {
  ch: ClickHouse;
  locks: LockSource;
  pairs: () => Promise<readonly Pair[]>;
  log: Logger;
  now: () => number;
  /** How long after its end a minute may still be written (the processors' lateness). */
  latenessMs: number;
  /** Before when the hour rows are complete: the process's one reader of the marks. */
  rolledUp: RolledUp;
}

/** Run every few seconds by the service's Poller (processors/shell/poller.ts). */
export class LoanKeeper implements PolledJob {
  readonly name = 'loan keeper';
  private readonly store: AgreementStore;
  private readonly targets: TargetRepository;

  constructor(private readonly deps: KeeperDeps) {
    this.store = new AgreementStore(deps.ch);
    this.targets = new TargetRepository(deps.ch);
  }

  /** Applies every due move; the loans changed. */
  async runOnce(): Promise<Loan[]> {
    return this.deps.locks.with(AGREEMENTS_LOCK, async () => {
      const now = this.deps.now();
      const loans = (await this.store.latest<LoanRecord['body']>('loan')).map(loanOf).filter((l) => l.status === 'active' || l.status === 'settlement_due' || l.status === 'defaulted');
      const pairs = await this.deps.pairs();
      const changed: Loan[] = [];
      for (const loan of loans) {
        const fixed = await this.fixPrices(loan, pairs, now);
        const due = settlementDue(fixed ?? loan, now);
        const next = due ? { ...due, version: loan.version + 1 } : fixed;
        if (next) changed.push(next);
      }
      // One insert for the run: each loan's new version.
      await this.store.write(changed.map((l) => loanRecord(l, { at: now, by: 0 })));
      // Award targets of active loans not switched on yet (a crash after the activation).
      const newest = new Map([...loans, ...changed].map((l) => [l.id, l]));
      for (const l of newest.values()) if (awardTargetsDue(l)) changed.push(await activateAwardTargets({ store: this.store, targets: this.targets, locks: this.deps.locks }, l, now, 0));
      return changed;
    });
  }

  /** The time before which every minute is written, at `t`. */
  private sealedAt(t: number): number {
    return sealedBefore({ latenessMs: this.deps.latenessMs, now: () => t });
  }

  /** The loan with its due strikes fixed and its start_twap recorded again if due; undefined when nothing was. */
  private async fixPrices(loan: Loan, pairs: readonly Pair[], now: number): Promise<Loan | undefined> {
    const sealed = this.sealedAt(now);
    const twap = async (w: [number, number]) => assetTwap(this.deps.ch, loan.asset, pairs, w[0], w[1], await this.deps.rolledUp.through());
    let changed = false;
    const tranches = [];
    for (const t of loan.tranches) {
      const price = strikeDue(t, sealed) ? await twap(strikeWindow(t)) : null;
      if (price === null) {
        // Not due, or its days had no market data: tried again on the next run.
        tranches.push(t);
        continue;
      }
      tranches.push({ ...t, strike_price: price * (1 + (t.premium_pct ?? 0) / 100) });
      changed = true;
    }
    let next: Loan = { ...loan, tranches };
    if (startTwapDue(loan, (t) => this.sealedAt(t), now)) {
      next = { ...next, start_twap: await twap(startTwapWindow(loan)), start_twap_at: now };
      changed = true;
    }
    return changed ? { ...next, version: loan.version + 1 } : undefined;
  }
}
