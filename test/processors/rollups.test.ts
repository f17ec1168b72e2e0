// Rollups missing after a crash are found again at start: by the last recorded progress,
// or, with none on record, by comparing each hour's rollup rows with its newest minute.
import { expect } from 'chai';
import { trade } from '../../domain/market/families/trade.ts';
import { Rollups } from '../../domain/market/repositories/rollups.ts';
import { testStack } from '../support/stack.ts';

describe('rollups: finding what a crash left unrolled', () => {
  const exchange = `rollx${Date.now().toString(36)}`;
  const pair = 'RLL/USD';
  const H1 = Date.UTC(2026, 0, 5, 10);
  const H2 = Date.UTC(2026, 0, 5, 11);
  const minute = (t: number, closedAt: number) => ({
    exchange,
    pair,
    minute: Math.floor(t / 1000),
    trades: 1,
    amount: 1,
    notional: 100,
    volume_usd: 100,
    usd_trades: 1,
    closed_at: closedAt,
  });
  const mine = async (rollups: Rollups) =>
    (await rollups.writtenSince(0))
      .filter((k) => k.exchange === exchange)
      .map((k) => new Date(k.minute).toISOString())
      .sort();

  it('with no progress on record, lists the hours whose hour or day row is older than their newest minute', async () => {
    const ch = testStack().service.deps.ch;
    const rollups = new Rollups(ch, trade);
    const t0 = Date.now();
    await ch.insert('trade_minutes', [minute(H1, t0), minute(H1 + 60_000, t0), minute(H2 + 120_000, t0)]);
    expect(await mine(rollups)).to.deep.equal([new Date(H1).toISOString(), new Date(H2).toISOString()]);

    await rollups.recompute([{ exchange, pair, minute: H1 }]);
    expect(await mine(rollups)).to.deep.equal([new Date(H2).toISOString()]);
    await rollups.recompute([{ exchange, pair, minute: H2 }]);
    expect(await mine(rollups)).to.deep.equal([]);

    // A minute written after its hour was rolled up, its rollup lost in a crash.
    await new Promise((r) => setTimeout(r, 5));
    await ch.insert('trade_minutes', [minute(H1 + 5 * 60_000, Date.now())]);
    expect(await mine(rollups)).to.deep.equal([new Date(H1).toISOString()]);
    await rollups.recompute([{ exchange, pair, minute: H1 }]);
    expect(await mine(rollups)).to.deep.equal([]);
    const [day] = await ch.query<{ trades: number }>(
      'SELECT trades FROM trade_days FINAL WHERE exchange = {exchange:String} AND pair = {pair:String}',
      { exchange, pair },
    );
    expect(Number(day?.trades)).to.equal(4);
  });
});
