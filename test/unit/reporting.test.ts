// The reporting method of market makers (domain/market-makers/reporting.ts): the minutes a
// push covers, and what an honest report of them holds.
import { expect } from 'chai';
import { LEVELS_BPS } from '../../domain/market/facts.ts';
import { bucketsToReport, coveredMinutes, reportCut, reportOf } from '../../domain/market-makers/reporting.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;

describe('reporting method (domain/market-makers/reporting.ts)', () => {
  const hour = Date.UTC(2026, 2, 3, 10);
  const lateness = 5_000;

  it('a push covers the minutes ended its lateness and a minute before it', () => {
    expect(reportCut(hour + 10 * MINUTE + 30_000, lateness)).to.equal(hour + 9 * MINUTE);
    expect(coveredMinutes('1h', hour, hour + 10 * MINUTE + 30_000, lateness)).to.deep.equal([hour, hour + 9 * MINUTE]);
    // After the hour: all of it.
    expect(coveredMinutes('1h', hour, hour + 2 * HOUR, lateness)).to.deep.equal([hour, hour + HOUR]);
    expect(coveredMinutes('5m', hour, hour + MINUTE, lateness)).to.equal(undefined);
    expect(bucketsToReport(hour + 10 * MINUTE + 30_000, lateness).map((b) => [b.interval, b.start])).to.deep.equal([
      ['5m', hour + 5 * MINUTE],
      ['1h', hour],
      ['1d', Date.UTC(2026, 2, 3)],
    ]);
  });

  it('reports volume as the sum of fills and depth as each wallet’s mean over its quoted minutes, wallets added', () => {
    const minute = (m: number, bid: number, volume: number) => ({ start: hour + m * MINUTE, snapshots: 2, bids: new Map([[99.99, 2 * bid]]), asks: new Map<number, number>(), mid: 100, volume });
    const r = reportOf([[minute(0, 100, 5), minute(1, 300, 7)], [minute(0, 50, 1)]], '1h', hour, hour + 2 * HOUR, lateness)!;
    expect(r.volume).to.equal(13);
    const i = LEVELS_BPS.indexOf(10);
    expect(r.bid[i]).to.equal(200 + 50);
    expect(r.ask[i]).to.equal(0 + 0);
  });
});
