// Minute retention (MINUTE_RETENTION_DAYS; docs/operations.md, "Disk"): a TTL set on every
// minute table, changed by a new setting, and removed by 0, also when there is none. The
// days are a century here: the tables are the test run's, and no row may go.
import { expect } from 'chai';
import { applyMinuteRetention, MINUTE_TABLES, minuteRetention } from '../../domain/market/repositories/retention.ts';
import { testStack } from '../support/stack.ts';

describe('minute retention', () => {
  const ch = () => testStack().service.deps.ch;
  after(() => applyMinuteRetention(ch(), 0));

  it('sets, changes and removes the TTL of every minute table', async () => {
    await applyMinuteRetention(ch(), 36_500);
    const set = await minuteRetention(ch());
    expect([...set.keys()].sort()).to.deep.equal([...MINUTE_TABLES].sort());
    expect([...set.values()]).to.deep.equal(MINUTE_TABLES.map(() => 36_500));
    await applyMinuteRetention(ch(), 36_600);
    expect([...(await minuteRetention(ch())).values()]).to.deep.equal(MINUTE_TABLES.map(() => 36_600));
    await applyMinuteRetention(ch(), 0);
    await applyMinuteRetention(ch(), 0);
    expect([...(await minuteRetention(ch())).values()]).to.deep.equal(MINUTE_TABLES.map(() => 0));
  });
});
