// A loan awarded from an RFQ comes with inactive `mm` targets for the KPIs of the winning
// proposal (domain/rfq/award.ts). They go active when the loan does: the obligations start
// with the loan. Two writes (the targets' new versions, then the loan's mark that it was
// done), each repeated harmlessly: whoever finds an active loan without the mark does both
// (the activate action at once, the keeper on its next run after a crash between them). The
// mark keeps a target the project switches off later from being switched on again.
import type { AgreementStore } from '../agreements/store.ts';
import type { LockSource } from '../../lib/locks.ts';
import { definitionOf, type TargetRepository } from '../targets/repository.ts';
import { loanRecord, type Loan } from './loan.ts';

/** Whether the loan's award targets are due to be switched on. */
export const awardTargetsDue = (l: Loan): boolean => l.status === 'active' && (l.award_targets?.length ?? 0) > 0 && l.award_targets_active !== true;

/**
 * Switches on the loan's award targets and marks the loan; the loan's new version. The caller
 * holds the agreements lock; this takes the targets lock inside it (that order only).
 */
export async function activateAwardTargets(
  d: { store: AgreementStore; targets: TargetRepository; locks: LockSource },
  loan: Loan,
  at: number,
  by: number,
): Promise<Loan> {
  const ids = new Set(loan.award_targets ?? []);
  await d.locks.with('targets:batch', async () => {
    // Those still live (the project may have deleted some), as they are now, switched on.
    const off = (await d.targets.all()).filter((t) => ids.has(t.id) && !t.active);
    // A target's newest version wins: write after the versions there (a clock behind them would lose).
    const after = Math.max(at, ...off.map((t) => t.created_at + 1));
    if (off.length > 0) await d.targets.applyBatch({ deleteIds: [], create: off.map((t) => ({ ...definitionOf(t), id: t.id, active: true })), by, at: after });
  });
  const next: Loan = { ...loan, award_targets_active: true, version: loan.version + 1 };
  await d.store.write([loanRecord(next, { at, by })]);
  return next;
}
