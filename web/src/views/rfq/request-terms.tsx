// What a request asks, as the project wrote it: shown above its proposals to the project and
// to the market makers proposing, so a proposal is written and compared against the asked.
import type { Schemas } from '../../api/client';
import { fmtNum, fmtTime, fmtUsd } from '../../ui/format';
import { scopeOf } from './kpi-rows';

type Rfq = Schemas['Rfq'];

/** A requirement in words: metric, direction and threshold, and where it applies when not everywhere. */
export function requirementText(k: Schemas['KpiShown']): string {
  const scope = scopeOf(k);
  return `${k.metric} ${k.direction === 'above' ? '≥' : '≤'} ${fmtNum(k.threshold)}${scope ? ` (${scope})` : ''}`;
}

export function RequestTerms({ rfq }: { rfq: Rfq }) {
  const markets = rfq.markets.map((m) => `${m.exchange} ${m.pair}`);
  return (
    <section aria-label="What the request asks">
      {rfq.description && <p>{rfq.description}</p>}
      <dl className="facts">
        <dt>Asset</dt>
        <dd>{rfq.asset}</dd>
        <dt>Loan models</dt>
        <dd>{rfq.models.join(', ')}</dd>
        <dt>Markets</dt>
        <dd>{markets.length > 0 ? markets.join(', ') : 'every pair of the asset'}</dd>
        <dt>Tokens lent at most</dt>
        <dd>{fmtNum(rfq.loan_budget.quantity)}{rfq.loan_budget.quote_amount > 0 && `, and ${fmtUsd(rfq.loan_budget.quote_amount)}`}</dd>
        <dt>Term</dt>
        <dd>{rfq.term_days} days</dd>
        <dt>Requirements</dt>
        <dd>{rfq.requirements.length > 0 ? <ul className="plain">{rfq.requirements.map((k, i) => <li key={i}>{requirementText(k)}</li>)}</ul> : 'none'}</dd>
        <dt>Invited</dt>
        <dd>{rfq.invited.length > 0 ? rfq.invited.join(', ') : 'any market maker'}</dd>
        <dt>Proposals</dt>
        <dd>{rfq.sealed ? 'sealed: the project sees them after the deadline' : 'seen by the project as they come'}</dd>
        <dt>Deadline (UTC)</dt>
        <dd>{fmtTime(rfq.deadline)}</dd>
      </dl>
    </section>
  );
}
