import { expect } from 'chai';
import { timestampOf, timestampSql } from '../../domain/market/timestamps.ts';
import { planBuckets, type MarketWindow } from '../../domain/market/window.ts';
import { testStack } from '../support/stack.ts';

const H = 3600;

/** Bucket starts (epoch s) every `step` seconds around `center`, `n` each side. */
const around = (center: number, step: number, n: number) => Array.from({ length: 2 * n + 1 }, (_, i) => center + (i - n) * step);

describe('time columns written by SQL and by luxon', () => {
  // The uptime endpoints have ClickHouse write their timestamps; every other bucketed row
  // is written by luxon. Both must give the same strings for every zone and instant.
  async function sqlTimestamps(w: MarketWindow, bs: number[]): Promise<Record<string, string>[]> {
    const items = timestampSql(w);
    return testStack().service.deps.ch.query<Record<string, string>>(`SELECT ${items.text} FROM (SELECT arrayJoin({bs:Array(UInt32)}) AS b) ORDER BY b`, { ...items.params, bs });
  }

  const cases: { zone: string; zoned: boolean; instants: number[] }[] = [
    { zone: 'UTC', zoned: false, instants: around(Date.UTC(2026, 0, 5) / 1000, H, 30) },
    // Clocks forward on 8 March and back on 1 November 2026, at 02:00 local.
    { zone: 'America/New_York', zoned: true, instants: [...around(Date.UTC(2026, 2, 8, 7) / 1000, 900, 12), ...around(Date.UTC(2026, 10, 1, 6) / 1000, 900, 12)] },
    // At +00:00 in winter but not a fixed zone: luxon writes +00:00, not Z.
    { zone: 'Europe/London', zoned: true, instants: [...around(Date.UTC(2026, 0, 5) / 1000, H, 3), ...around(Date.UTC(2026, 2, 29, 1) / 1000, 900, 8)] },
    { zone: 'Asia/Kolkata', zoned: true, instants: around(Date.UTC(2026, 0, 4, 18, 30) / 1000, 1800, 6) },
    { zone: 'Asia/Kathmandu', zoned: true, instants: around(Date.UTC(2026, 5, 1) / 1000, 900, 4) },
    { zone: 'America/St_Johns', zoned: true, instants: around(Date.UTC(2026, 2, 8, 5, 30) / 1000, 900, 8) },
    // Half-hour daylight saving.
    { zone: 'Australia/Lord_Howe', zoned: true, instants: around(Date.UTC(2026, 3, 4, 15) / 1000, 900, 8) },
    { zone: 'Etc/GMT+5', zoned: true, instants: around(Date.UTC(2026, 0, 5) / 1000, H, 2) },
    // Zones that once moved across the date line (the engine's own offset of them is a day off).
    { zone: 'Pacific/Apia', zoned: true, instants: around(Date.UTC(2026, 10, 28, 11) / 1000, H, 4) },
    { zone: 'Pacific/Kiritimati', zoned: true, instants: around(Date.UTC(2026, 10, 28, 10) / 1000, H, 4) },
  ];

  for (const { zone, zoned, instants } of cases) {
    it(`agree for ${zone}${zoned ? '' : ' (not zoned)'}`, async () => {
      const w: MarketWindow = { interval: '15m', ranges: [], zone, zoned, rolledUpTo: Infinity, plan: { pieces: [] } };
      const fromSql = await sqlTimestamps(w, instants);
      const fromLuxon = [...instants].sort((a, b) => a - b).map((b) => timestampOf(w, b));
      expect(fromSql).to.deep.equal(fromLuxon);
    });
  }

  it('agree for interval c, with each bucket interval', async () => {
    const ranges: [number, number][] = [[Date.UTC(2026, 2, 7, 22, 50), Date.UTC(2026, 2, 9, 1, 10)]];
    const w: MarketWindow = { interval: 'c', ranges, zone: 'America/New_York', zoned: true, rolledUpTo: Infinity, plan: planBuckets('c', ranges, 'America/New_York', Infinity) };
    const indices = w.plan.buckets!.map((_, i) => i);
    expect(indices.length).to.be.greaterThan(10);
    expect(await sqlTimestamps(w, indices)).to.deep.equal(indices.map((i) => timestampOf(w, i)));
  });

  it('write no time column for interval a', () => {
    const w: MarketWindow = { interval: 'a', ranges: [], zone: 'UTC', zoned: false, rolledUpTo: Infinity, plan: { pieces: [] } };
    expect(timestampSql(w)).to.deep.equal({ text: '', params: {} });
    expect(timestampOf(w, 0)).to.deep.equal({});
  });
});
