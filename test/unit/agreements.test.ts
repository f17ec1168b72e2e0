// Pure rules of loans and RFQs (addendum sections 7 and 8): each record as it stands at a
// moment (the moves the clock makes due), the moves the keeper writes, a command's outcome
// and its answer over HTTP, and the poller that runs the keepers.
import { expect } from 'chai';
import { errorOf, valueOf } from '../../api/http/outcomes.ts';
import { HttpError } from '../../api/http/errors.ts';
import { loanAsOf, settlementDue } from '../../domain/loans/actions.ts';
import { draftLoan, moved, type Loan, type LoanTerms } from '../../domain/loans/loan.ts';
import { decide, refuse } from '../../domain/outcome.ts';
import { dueMoves, proposalAsOf, rfqAsOf } from '../../domain/rfq/deadlines.ts';
import { newProposal, newRfq, nextProposal, nextRfq, type RfqTerms } from '../../domain/rfq/rfq.ts';
import { silentLogger } from '../../lib/log.ts';
import { Poller } from '../../processors/shell/poller.ts';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

const rfqTerms: RfqTerms = {
  asset: 'TKN',
  title: 't',
  description: '',
  models: ['retainer'],
  exchanges: ['ex'],
  pairs: ['TKN/USDT'],
  markets: [{ exchange: 'ex', pair: 'TKN/USDT' }],
  loan_budget: { quantity: 10, quote_amount: 0 },
  term_days: 30,
  requirements: [],
  invited: [],
  sealed: false,
  deadline: T0 + DAY,
};

const loanTerms: LoanTerms = {
  market_maker: 'mm',
  asset: 'TKN',
  model: 'retainer',
  quantity: 10,
  quote_amount: 0,
  retainer_fee_usd_month: 1,
  interest_rate_pct: 0,
  settlement_asset: 'USDT',
  collateral: null,
  exchanges: ['ex'],
  pairs: ['TKN/USDT'],
  start_date: T0,
  end_date: T0 + 30 * DAY,
  tranches: [
    { id: 1, quantity: 4, disbursed_at: T0, strike_basis: 'fixed', strike_price: 1, premium_pct: null, expires_at: T0 + 5 * DAY, settlement: null, settled_quantity: null },
    { id: 2, quantity: 6, disbursed_at: T0, strike_basis: 'fixed', strike_price: 1, premium_pct: null, expires_at: T0 + 9 * DAY, settlement: null, settled_quantity: null },
  ],
};

describe('RFQs and proposals as they stand at a moment', () => {
  const open = nextRfq(newRfq(1, 'proj', rfqTerms, T0, 7), 'open', T0 + 1, 7);
  const proposal = newProposal(2, open, 'mm', { model: 'retainer', loan: { quantity: 1, quote_amount: 0, tranches: [] }, retainer_fee_usd_month: 1, interest_rate_pct: 0, kpis: [], exchanges: ['ex'], notes: '', valid_until: T0 + DAY / 2 }, T0 + 2, 8);

  it('an open RFQ reads closed from its deadline on, the history dated at the deadline by the service', () => {
    expect(rfqAsOf(open, T0 + DAY - 1)).to.equal(open);
    const closed = rfqAsOf(open, T0 + 3 * DAY);
    expect(closed.status).to.equal('closed');
    expect(closed.version).to.equal(open.version + 1);
    expect(closed.history.at(-1)).to.deep.equal({ status: 'closed', at: T0 + DAY, by: 0 });
    // The same version whenever it is read: the keeper writes what the reads showed.
    expect(rfqAsOf(open, T0 + 9 * DAY)).to.deep.equal(closed);
    expect(rfqAsOf(nextRfq(open, 'cancelled', T0 + 3, 7), T0 + 3 * DAY).status).to.equal('cancelled');
  });

  it('a live proposal reads expired from its valid_until on; a withdrawn one stays withdrawn', () => {
    expect(proposalAsOf(proposal, T0 + DAY / 2 - 1)).to.equal(proposal);
    expect(proposalAsOf(proposal, T0 + DAY / 2)).to.deep.include({ status: 'expired', version: 2 });
    expect(proposalAsOf(nextProposal(proposal, 'withdrawn', T0 + 3, 8), T0 + DAY).status).to.equal('withdrawn');
  });

  it('the keeper writes exactly the versions the reads show, each once', () => {
    const moves = dueMoves([open], [proposal], T0 + 2 * DAY);
    expect(moves.map((m) => [m.kind, m.status, m.version, m.changed_by])).to.deep.equal([
      ['rfq', 'closed', 3, 0],
      ['proposal', 'expired', 2, 0],
    ]);
    expect(moves[0]!.body).to.deep.include({ history: rfqAsOf(open, T0 + 2 * DAY).history });
    expect(dueMoves([open], [proposal], T0)).to.deep.equal([]);
  });
});

describe('loans as they stand at a moment', () => {
  const active: Loan = moved(draftLoan(3, 'proj', loanTerms, T0 - DAY, 7), 'active', T0, 7);

  it('an active loan reads settlement_due from its last expiry on, dated at that expiry by the service', () => {
    expect(loanAsOf(active, T0 + 9 * DAY - 1)).to.equal(active);
    const due = loanAsOf(active, T0 + 20 * DAY);
    expect(due.status).to.equal('settlement_due');
    expect(due.history.at(-1)).to.deep.equal({ status: 'settlement_due', at: T0 + 9 * DAY, by: 0 });
    expect(settlementDue(active, T0 + 30 * DAY)).to.deep.equal(due);
    expect(loanAsOf(moved(active, 'recalled', T0 + DAY, 7), T0 + 20 * DAY).status).to.equal('recalled');
  });

  it('a loan activated after its last expiry reads settlement_due from the activation on, never dated before it', () => {
    const late = moved(draftLoan(4, 'proj', loanTerms, T0 - DAY, 7), 'active', T0 + 12 * DAY, 7);
    expect(loanAsOf(late, T0 + 12 * DAY).history.at(-1)).to.deep.equal({ status: 'settlement_due', at: T0 + 12 * DAY, by: 0 });
  });
});

describe('a command\'s outcome', () => {
  it('is its value, or the refusal thrown anywhere in its steps, and other errors stay errors', async () => {
    expect(await decide(async () => 5)).to.deep.equal({ ok: true, value: 5 });
    expect(await decide(async () => refuse.state('it is closed'))).to.deep.equal({ ok: false, refusal: { kind: 'state', message: 'it is closed' } });
    expect(await decide(async () => refuse.fields({ asset: ['bad'] }))).to.deep.equal({ ok: false, refusal: { kind: 'fields', fields: { asset: ['bad'] } } });
    let thrown: unknown;
    await decide(async () => {
      throw new RangeError('boom');
    }).catch((e: unknown) => (thrown = e));
    expect(thrown).to.be.instanceOf(RangeError);
  });

  it('answers 404, 403, 400 {message} and 400 {field} in the specification\'s shapes', () => {
    const shape = (e: HttpError) => [e.status, e.body];
    expect(shape(errorOf({ kind: 'unknown' }))).to.deep.equal([404, { detail: 'Not found.' }]);
    expect(shape(errorOf({ kind: 'forbidden' }))).to.deep.equal([403, { detail: 'You do not have permission to perform this action.' }]);
    expect(shape(errorOf({ kind: 'forbidden', message: 'Only members.' }))).to.deep.equal([403, { detail: 'Only members.' }]);
    expect(shape(errorOf({ kind: 'state', message: 'It is closed.' }))).to.deep.equal([400, { message: 'It is closed.' }]);
    expect(shape(errorOf({ kind: 'fields', fields: { a: ['x'] } }))).to.deep.equal([400, { a: ['x'] }]);
    expect(valueOf({ ok: true, value: 'v' })).to.equal('v');
    expect(() => valueOf({ ok: false, refusal: { kind: 'unknown' } })).to.throw(HttpError);
  });
});

describe('the poller of the timed jobs', () => {
  it('runs once at start, then one run at a time; a failed run is logged and the next tick runs again; stop waits for the run in progress', async () => {
    let runs = 0;
    let inFlight = 0;
    let most = 0;
    let release: () => void = () => {};
    const job = {
      name: 'test job',
      async runOnce() {
        runs += 1;
        inFlight += 1;
        most = Math.max(most, inFlight);
        if (runs === 1) await new Promise<void>((r) => (release = r));
        inFlight -= 1;
        if (runs === 2) throw new Error('second run fails');
      },
    };
    const errors: string[] = [];
    const log = { ...silentLogger, error: (msg: string) => errors.push(msg) };
    const poller = new Poller(job, log);
    poller.start(5);
    expect(runs).to.equal(1);
    // Ticks pass while the first run is held: none starts beside it.
    await new Promise((r) => setTimeout(r, 40));
    expect(runs).to.equal(1);
    release();
    await new Promise((r) => setTimeout(r, 60));
    expect(runs).to.be.greaterThan(2);
    expect(most).to.equal(1);
    expect(errors).to.deep.equal(['test job failed']);
    await poller.stop();
    const after = runs;
    await new Promise((r) => setTimeout(r, 30));
    expect(runs).to.equal(after);
  });
});
