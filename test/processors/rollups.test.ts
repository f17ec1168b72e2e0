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

  it('recomputes exactly the hours it is given, and their days, also among many keys (statements of KEYS_PER_STATEMENT, more than the engine hashes as a constant)', async () => {
    const ch = testStack().service.deps.ch;
    const rollups = new Rollups(ch, trade);
    const ex = `${exchange}k`;
    const row = (p: string, t: number) => ({ ...minute(t, Date.now()), exchange: ex, pair: p });
    await ch.insert('trade_minutes', [row('A/USD', H1), row('A/USD', H2), row('B/USD', H1), row('B/USD', H2 + 60_000)]);
    // A's first hour and B's second, among 40,000 keys of pairs with no rows.
    const decoys = Array.from({ length: 20_000 }, (_, i) => [H1, H2].map((m) => ({ exchange: ex, pair: `D${i}/USD`, minute: m }))).flat();
    await rollups.recompute([...decoys.slice(0, 20_000), { exchange: ex, pair: 'A/USD', minute: H1 }, { exchange: ex, pair: 'B/USD', minute: H2 + 60_000 }, ...decoys.slice(20_000)]);
    const hours = await ch.query<{ pair: string; hour: string; trades: number }>(
      `SELECT pair, toString(bucket) AS hour, trades FROM trade_hours FINAL WHERE exchange = {ex:String} ORDER BY pair, bucket`,
      { ex },
    );
    expect(hours.map((h) => [h.pair, h.hour, Number(h.trades)])).to.deep.equal([
      ['A/USD', '2026-01-05 10:00:00', 1],
      ['B/USD', '2026-01-05 11:00:00', 1],
    ]);
    // Each day from the hour rows written before it, whichever statement wrote them.
    const days = await ch.query<{ pair: string; trades: number }>(
      `SELECT pair, trades FROM trade_days FINAL WHERE exchange = {ex:String} ORDER BY pair`,
      { ex },
    );
    expect(days.map((d) => [d.pair, Number(d.trades)])).to.deep.equal([
      ['A/USD', 1],
      ['B/USD', 1],
    ]);
  });
});
