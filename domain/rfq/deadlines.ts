// The service's own moves (addendum section 8; docs/rfq.md, "Deadlines"): an `open` RFQ
// whose deadline has come becomes `closed`, and a live proposal whose `valid_until` has
// passed becomes `expired`. The deadline keeper (processors/rfq/deadline-keeper.ts) writes
// them every few seconds; a command applies them before it acts, under the same lock, so
// nothing is decided on a state the clock has already changed; a read shows each record as
// it stands at its moment (`rfqAsOf`, `proposalAsOf`), written yet or not.
import { AGREEMENTS_LOCK, AgreementStore, type AgreementRecord } from '../agreements/store.ts';
import type { LockSource } from '../../lib/locks.ts';
import { LIVE_PROPOSAL, nextProposal, nextRfq, proposalOf, proposalRecord, rfqOf, rfqRecord, type Proposal, type ProposalBody, type Rfq, type RfqBody } from './rfq.ts';

/** The RFQ as it stands at `now`: closed from its deadline on (the history entry dated at the deadline, by 0, the service). */
export const rfqAsOf = (q: Rfq, now: number): Rfq => (q.status === 'open' && q.deadline <= now ? nextRfq(q, 'closed', q.deadline, 0) : q);

/** The proposal as it stands at `now`: expired from its valid_until on, while live. */
export const proposalAsOf = (p: Proposal, now: number): Proposal => (LIVE_PROPOSAL.includes(p.status) && p.valid_until <= now ? nextProposal(p, 'expired', p.valid_until, 0) : p);

/**
 * The moves due at `now` among these records: new versions to write (by 0, the service),
 * written at `now`; their history entries carry the moment itself (the deadline, the end of
 * validity), also when the move is applied late (after the service was down).
 */
export function dueMoves(rfqs: readonly Rfq[], proposals: readonly Proposal[], now: number): AgreementRecord<unknown>[] {
  const out: AgreementRecord<unknown>[] = [];
  const change = { at: now, by: 0 };
  for (const q of rfqs) {
    const moved = rfqAsOf(q, now);
    if (moved !== q) out.push(rfqRecord(moved, change));
  }
  for (const p of proposals) {
    const moved = proposalAsOf(p, now);
    if (moved !== p) out.push(proposalRecord(moved, change));
  }
  return out;
}

/** Whether some record is due (a cheap check before taking the lock). */
export const anyDue = (rfqs: readonly Rfq[], proposals: readonly Proposal[], now: number): boolean => dueMoves(rfqs, proposals, now).length > 0;

export interface Deadlines {
  store: AgreementStore;
  locks: LockSource;
}

export async function readAll(store: AgreementStore): Promise<{ rfqs: Rfq[]; proposals: Proposal[] }> {
  const [r, p] = await Promise.all([store.latest<RfqBody>('rfq'), store.latest<ProposalBody>('proposal')]);
  return { rfqs: r.map(rfqOf), proposals: p.map(proposalOf) };
}

/** Applies every due move in one insert, under the agreements lock; the number of records moved. Call it without holding the lock. */
export async function applyDue(d: Deadlines, now: number): Promise<number> {
  const seen = await readAll(d.store);
  if (!anyDue(seen.rfqs, seen.proposals, now)) return 0;
  return d.locks.with(AGREEMENTS_LOCK, async () => applyDueLocked(d.store, now));
}

/** The same, for a caller already holding the agreements lock. */
export async function applyDueLocked(store: AgreementStore, now: number): Promise<number> {
  const { rfqs, proposals } = await readAll(store);
  const moves = dueMoves(rfqs, proposals, now);
  await store.write(moves);
  return moves.length;
}
