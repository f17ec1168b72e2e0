-- Loans (addendum section 7) and RFQs with their proposals (addendum section 8): one row
-- per version of a record, every version kept (a loan's history, a proposal's revisions).
-- A reader takes each id's highest version.
--
-- One unpartitioned MergeTree for the three kinds, so that a change spanning several
-- records (an RFQ award: the RFQ, every proposal and the new draft loan) is ONE insert,
-- which ClickHouse commits whole or not at all, also when the process dies during it.
-- The award's targets go to `targets` before it, marked with the award's `commit`
-- (batch_id 'award:<commit>'); they count only once a row here carries that commit
-- (domain/targets/repository.ts), so a crash between the two inserts leaves nothing
-- visible.
--
-- Each row is also one event (loans.events, rfq.events): processors/agreements/
-- event-relay.ts publishes the rows not yet marked as sent (notifications_sent, channel
-- 'agreements'), so a change is published at least once, also after a crash.
CREATE TABLE IF NOT EXISTS agreements (
  kind Enum8('loan' = 1, 'rfq' = 2, 'proposal' = 3),
  id UInt64,
  version UInt32,
  -- The project: a loan's lender, an RFQ's owner, a proposal's RFQ owner.
  organization String,
  -- A loan's borrower, a proposal's author; '' for an RFQ.
  market_maker String,
  asset String,
  -- A proposal's RFQ; the RFQ a loan was awarded from; 0 otherwise.
  parent UInt64,
  status LowCardinality(String),
  -- The record's fields as JSON (the domain types of domain/loans and domain/rfq).
  body String,
  commit String,
  changed_at DateTime64(3, 'UTC'),
  changed_by UInt64
) ENGINE = MergeTree
ORDER BY (kind, id, version);
