// Rollups missing after a crash are found again at start: by the last recorded progress,
// or, with none on record, by comparing each hour's rollup rows with its newest minute.
// Hours are rolled up once sealed, and the mark readers plan with moves past them.
import { expect } from 'chai';
import { trade } from '../../domain/market/families/trade.ts';
import { Rollups } from '../../domain/market/repositories/rollups.ts';
import { MARKET_SOURCES, OPEN_STEP_MS, RolledUp, RollupMarks } from '../../domain/market/repositories/rollup-marks.ts';
import { SealedRollups } from '../../processors/market/sealed-rollups.ts';
import { PartialsRepository } from '../../domain/market/repositories/partials.ts';
import { marketWindow } from '../../domain/market/window.ts';
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

describe('rollups of sealed hours only', () => {
  const exchange = `seal${Date.now().toString(36)}`;
  const pair = 'SLD/USD';
  const source = `test_${exchange}`;
  const H0 = Date.UTC(2026, 0, 6, 9);
  const H1 = H0 + 3_600_000;
  const H2 = H1 + 3_600_000;
  const LATENESS = 5_000;
  const minute = (t: number) => ({ exchange, pair, minute: Math.floor(t / 1000), trades: 1, amount: 1, notional: 100, volume_usd: 100, usd_trades: 1, closed_at: t });
  const key = (t: number) => ({ exchange, pair, minute: t });
  const hourTrades = async (ch: ReturnType<typeof testStack>['service']['deps']['ch']) =>
    (
      await ch.query<{ hour: string; trades: number }>(
        `SELECT toString(bucket) AS hour, trades FROM trade_hours FINAL WHERE exchange = {exchange:String} ORDER BY bucket`,
        { exchange },
      )
    ).map((r) => [r.hour, Number(r.trades)]);

  const openTrades = async (ch: ReturnType<typeof testStack>['service']['deps']['ch'], mark: number) =>
    Number(
      (
        await ch.query<{ trades: number }>(
          `SELECT sum(trades) AS trades FROM trade_open_hours FINAL WHERE exchange = {exchange:String} AND bucket = toDateTime({mark:UInt32}, 'UTC')`,
          { exchange, mark: mark / 1000 },
        )
      )[0]?.trades ?? 0,
    );

  it('rolls the open hour up at each step the clock seals, and an hour once it seals it; minutes before the mark as they come; the waiting hours again after a restart', async () => {
    const ch = testStack().service.deps.ch;
    const marks = new RollupMarks(ch);
    let clock = H1 + 10 * 60_000;
    const start = () => new SealedRollups(new Rollups(ch, trade), marks, source, { latenessMs: LATENESS, now: () => clock });
    const STEP = 10 * 60_000;

    let sealed = start();
    await sealed.load();
    expect(await marks.read(source)).to.equal(H1, 'a first start marks the hour the clock has sealed');
    // Other tests' minutes from the mark on wait too: counted relative to them.
    const others = sealed.waiting();

    // Two minutes of the open hour wait; a late minute of a sealed hour is rolled up at once.
    await ch.insert('trade_minutes', [minute(H1 + 60_000), minute(H1 + 120_000), minute(H0 + 60_000)]);
    await sealed.written([key(H1 + 60_000), key(H1 + 120_000), key(H0 + 60_000)]);
    expect(await hourTrades(ch)).to.deep.equal([['2026-01-06 09:00:00', 1]]);
    expect(sealed.waiting()).to.equal(others + 1);

    // The first step of the open hour: its rows to the step, then the mark; no hour row yet.
    clock = H1 + STEP + LATENESS + 60_000 - 1;
    expect(sealed.due()).to.equal(false, 'not before the lateness and a minute have passed');
    clock += 1;
    expect(sealed.due()).to.equal(true);
    await sealed.seal();
    expect(await marks.read(source)).to.equal(H1 + STEP);
    expect(await openTrades(ch, H1 + STEP)).to.equal(2);
    expect(await hourTrades(ch)).to.deep.equal([['2026-01-06 09:00:00', 1]]);
    expect(sealed.due()).to.equal(false);

    // A late minute before the mark goes into the mark's rows at once; one after it waits.
    await ch.insert('trade_minutes', [minute(H1 + 5 * 60_000), minute(H1 + 12 * 60_000)]);
    await sealed.written([key(H1 + 5 * 60_000), key(H1 + 12 * 60_000)]);
    expect(await openTrades(ch, H1 + STEP)).to.equal(3);

    // Two steps at once (a processor that lagged) roll up to the later one only.
    clock = H1 + 3 * STEP + LATENESS + 60_000;
    await sealed.seal();
    expect(await marks.read(source)).to.equal(H1 + 3 * STEP);
    expect(await openTrades(ch, H1 + 3 * STEP)).to.equal(4);
    expect(await openTrades(ch, H1 + STEP)).to.equal(3, 'the rows of an earlier mark stay as they were, for readers still planning with it');

    clock = H2 + LATENESS + 60_000;
    await sealed.seal();
    expect(await hourTrades(ch)).to.deep.equal([
      ['2026-01-06 09:00:00', 1],
      ['2026-01-06 10:00:00', 4],
    ]);
    expect(await marks.read(source)).to.equal(H2);

    // A minute of the next hour is rolled up at its first step; another is written before
    // that step, but the process stops before rolling it up.
    await ch.insert('trade_minutes', [minute(H2 + 180_000)]);
    await sealed.written([key(H2 + 180_000)]);
    clock = H2 + 2 * STEP + LATENESS + 60_000;
    await sealed.seal();
    expect(await openTrades(ch, H2 + 2 * STEP)).to.equal(1);
    await ch.insert('trade_minutes', [minute(H2 + 240_000)]);
    sealed = start();
    await sealed.load();
    expect(await marks.read(source)).to.equal(H2 + 2 * STEP, 'a restart keeps the stored mark');
    expect(await openTrades(ch, H2 + 2 * STEP)).to.equal(2, 'and rolls its rows up again');
    clock = H2 + 3_600_000 + LATENESS + 60_000;
    await sealed.seal();
    expect(await hourTrades(ch)).to.deep.equal([
      ['2026-01-06 09:00:00', 1],
      ['2026-01-06 10:00:00', 4],
      ['2026-01-06 11:00:00', 2],
    ]);
    const [day] = await ch.query<{ trades: number }>('SELECT trades FROM trade_days FINAL WHERE exchange = {exchange:String}', { exchange });
    expect(Number(day?.trades)).to.equal(7);
    expect(await marks.read(source)).to.equal(H2 + 3_600_000);
  });

  it('gives readers the lowest mark of the sources, none as Infinity, and reads it again only when it may have moved', async () => {
    const ch = testStack().service.deps.ch;
    const marks = new RollupMarks(ch);
    const [a, b] = [`${source}a`, `${source}b`];
    expect(await marks.lowest([a, b])).to.equal(Infinity);
    await marks.write(a, H2);
    await marks.write(b, H1);
    await marks.write(b, H0); // an older mark written later does not move it back
    expect(await marks.lowest([a, b])).to.equal(H1);
    // Nor once the rows are merged (the table keeps each source's highest mark: 009).
    await ch.command('OPTIMIZE TABLE rollup_marks FINAL');
    expect(await marks.lowest([a, b])).to.equal(H1);
  });

  it('plans market windows with the market families\' common mark inside an hour, every other reader with whole hours, and reads the marks again only when they may have moved', async () => {
    const ch = testStack().service.deps.ch;
    const marks = new RollupMarks(ch);
    // The service's sources, under names of this test's own.
    const prefix = `${source}_`;
    let reads = 0;
    const mine = {
      bySource: async (sources: readonly string[]) => {
        reads++;
        const found = await marks.bySource(sources.map((s) => prefix + s));
        return new Map([...found].map(([s, t]) => [s.slice(prefix.length), t]));
      },
    } as unknown as RollupMarks;
    const write = (sources: readonly string[], t: number) => Promise.all(sources.map((s) => marks.write(prefix + s, t)));
    const STEP = OPEN_STEP_MS;
    let clock = H2 + 30 * 60_000;
    const rolledUp = new RolledUp(mine, () => clock);
    expect([await rolledUp.through(), await rolledUp.market()]).to.deep.equal([Infinity, Infinity]);

    await write(MARKET_SOURCES, H2 + STEP);
    await write(['trusted_volume_minutes'], H2);
    clock += 1_000;
    expect([await rolledUp.through(), await rolledUp.market()]).to.deep.equal([H2, H2 + STEP]);
    clock += 1_000; // a step behind the clock's: read again after a second
    expect(await rolledUp.market()).to.equal(H2 + STEP);
    expect(reads).to.equal(3);

    // One family a step ahead: the others' rows of its mark do not exist; whole hours.
    await marks.write(prefix + MARKET_SOURCES[0]!, H2 + 2 * STEP);
    clock += 1_000;
    expect([await rolledUp.through(), await rolledUp.market()]).to.deep.equal([H2, H2]);
    await write(MARKET_SOURCES, H2 + 3 * STEP);
    clock += 1_000;
    expect(await rolledUp.market()).to.equal(H2 + 3 * STEP);
    const before = reads;
    clock += 5 * 60_000; // at the clock's step and hour: kept until the next step
    expect(await rolledUp.market()).to.equal(H2 + 3 * STEP);
    expect(reads).to.equal(before);
    clock = H2 + 4 * STEP;
    expect(await rolledUp.market()).to.equal(H2 + 3 * STEP);
    expect(reads).to.equal(before + 1);

    // A mark inside an hour left an hour behind is planned with as its hour.
    clock = H2 + 3 * STEP + 3_600_000 + 1;
    expect(await rolledUp.market()).to.equal(H2);
  });
});

describe('windows over hours not yet rolled up', () => {
  it('answer from the minutes after the mark, where the hour rows do not hold them yet', async () => {
    const ch = testStack().service.deps.ch;
    const exchange = `mark${Date.now().toString(36)}`;
    const pair = 'MRK/USD';
    const H = Date.UTC(2026, 0, 7, 14);
    // An hour rolled up, and the next one's minutes waiting for their hour to be sealed.
    await ch.insert('trade_minutes', [
      { exchange, pair, minute: (H - 3_600_000) / 1000, trades: 2, amount: 1, notional: 100, volume_usd: 100, usd_trades: 2, closed_at: H },
      ...[0, 1, 2].map((m) => ({ exchange, pair, minute: (H + m * 60_000) / 1000, trades: 1, amount: 1, notional: 100, volume_usd: 100, usd_trades: 1, closed_at: H })),
    ]);
    await new Rollups(ch, trade).recompute([{ exchange, pair, minute: H - 3_600_000 }]);
    const trades = async (rolledUpTo: number) => {
      const w = marketWindow('a', { kind: 'range', from: H - 3_600_000, to: H + 3_600_000 }, undefined, H + 3 * 60_000, rolledUpTo);
      const rows = await new PartialsRepository(ch).read('trade', { pairs: [{ exchange, pair }], interval: 'a', zone: 'UTC', pieces: w.plan.pieces });
      return rows.reduce((n, r) => n + Number(r.trades), 0);
    };
    expect(await trades(H)).to.equal(5);
    // Planned as if every hour were rolled up, the open hour's row is read, and it has none of them.
    expect(await trades(Infinity)).to.equal(2);
  });

  it('answer from the open hour\'s rows of the mark they plan with, and minutes after it, also once a later mark\'s rows are written', async () => {
    const ch = testStack().service.deps.ch;
    const exchange = `open${Date.now().toString(36)}`;
    const pair = 'OPN/USD';
    const H = Date.UTC(2026, 0, 7, 16);
    const row = (t: number, n: number) => ({ exchange, pair, minute: t / 1000, trades: n, amount: 1, notional: 100, volume_usd: 100, usd_trades: n, closed_at: H });
    await ch.insert('trade_minutes', [row(H - 3_600_000, 2), ...[0, 1, 2, 3].map((m) => row(H + m * 60_000, 1 + m))]);
    const rollups = new Rollups(ch, trade);
    await rollups.recompute([{ exchange, pair, minute: H - 3_600_000 }]);
    const keys = [{ exchange, pair, minute: H }];
    await rollups.rollOpen(keys, H + 2 * 60_000);
    const trades = async (rolledUpTo: number, interval: 'a' | '1h' | '15m' = 'a') => {
      const w = marketWindow(interval, { kind: 'range', from: H - 3_600_000, to: H + 3_600_000 }, undefined, H + 5 * 60_000, rolledUpTo);
      const rows = await new PartialsRepository(ch).read('trade', { pairs: [{ exchange, pair }], interval, zone: 'UTC', pieces: w.plan.pieces });
      return rows.reduce((n, r) => n + Number(r.trades), 0);
    };
    expect(await trades(H + 2 * 60_000)).to.equal(12);
    // The rows of a later mark do not count for a reader still planning with the earlier one.
    await rollups.rollOpen(keys, H + 3 * 60_000);
    expect(await trades(H + 2 * 60_000)).to.equal(12);
    expect(await trades(H + 3 * 60_000)).to.equal(12);
    // Hour buckets read them as well; 15-minute buckets read minutes.
    expect(await trades(H + 3 * 60_000, '1h')).to.equal(12);
    expect(await trades(H + 3 * 60_000, '15m')).to.equal(12);
    // Without rows of the mark (none rolled up to it), an answer would lack the hour so far.
    expect(await trades(H + 4 * 60_000)).to.equal(2);
  });
});
