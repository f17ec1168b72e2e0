// The service's own moves on loans (addendum section 7; docs/loans.md), run every few
// seconds in the service: an active loan whose last tranche has expired moves to
// `settlement_due`, and a `twap_premium` tranche's strike is fixed once the 7 days after
// its disbursement have passed (that TWAP x (1 + premium_pct/100)). Each is a new version
// of the loan, written under the agreements lock (so it cannot interleave with an action),
// and published by the event relay like any change. A strike whose days had no market data
// stays null and is tried again on the next run. The KPI targets an RFQ award made with an
// active loan are switched on if the activation did not finish doing so.
import { AGREEMENTS_LOCK, AgreementStore } from '../../domain/agreements/store.ts';
import { settlementDue } from '../../domain/loans/actions.ts';
import { loanOf, loanRecord, STRIKE_TWAP_DAYS, type Loan, type LoanRecord } from '../../domain/loans/loan.ts';
import { assetTwap } from '../../domain/market/prices.ts';
import { activateAwardTargets, awardTargetsDue } from '../../domain/loans/award-targets.ts';
import { TargetRepository } from '../../domain/targets/repository.ts';
import type { Pair } from '../../domain/reference/repository.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';
import type { RolledUp } from '../../domain/market/repositories/rollup-marks.ts';
import type { LockSource } from '../../lib/locks.ts';
import type { PolledJob } from '../shell/poller.ts';
import { DAY_MS } from '../../lib/time.ts';

export interface KeeperDeps {
  ch: ClickHouse;
  locks: LockSource;
  pairs: () => Promise<readonly Pair[]>;
  log: Logger;
  now: () => number;
  /** Before when the hour rows are complete: the process's one reader of the marks. */
  rolledUp: RolledUp;
}

/** A tranche's strike window: the 7 days after its disbursement. */
const strikeWindow = (disbursedAt: number): [number, number] => [disbursedAt, disbursedAt + STRIKE_TWAP_DAYS * DAY_MS];

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
        const fixed = await this.fixStrikes(loan, pairs, now);
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

  private async fixStrikes(loan: Loan, pairs: readonly Pair[], now: number): Promise<Loan | undefined> {
    let changed = false;
    const tranches = [];
    for (const t of loan.tranches) {
      const [from, to] = strikeWindow(t.disbursed_at);
      if (t.strike_basis !== 'twap_premium' || t.strike_price !== null || now < to) {
        tranches.push(t);
        continue;
      }
      const twap = await assetTwap(this.deps.ch, loan.asset, pairs, from, to, await this.deps.rolledUp.through());
      if (twap === null) {
        tranches.push(t);
        continue;
      }
      tranches.push({ ...t, strike_price: twap * (1 + (t.premium_pct ?? 0) / 100) });
      changed = true;
    }
    return changed ? { ...loan, tranches, version: loan.version + 1 } : undefined;
  }
}
