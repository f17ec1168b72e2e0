import { expect } from 'chai';
import { DateTime } from 'luxon';
import { parseRequest } from '../../api/resources/market/params.ts';
import { validators } from '../../api/resources/market/schemas.ts';
import { bucketStart, bucketsOf, planBuckets, sessionRanges, tile } from '../../domain/market/window.ts';

const H = 3_600_000;
const D = 24 * H;
const iso = (t: number) => new Date(t).toISOString();

describe('windows, sessions and bucket plans', () => {
  it('tiles a window with the coarsest rows: minutes, hours, days, hours, minutes', () => {
    const from = Date.UTC(2026, 0, 4, 22, 30);
    const to = Date.UTC(2026, 0, 7, 1, 30);
    expect(tile(from, to, Infinity).map((p) => [p.table, iso(p.from), iso(p.to)])).to.deep.equal([
      ['minutes', '2026-01-04T22:30:00.000Z', '2026-01-04T23:00:00.000Z'],
      ['hours', '2026-01-04T23:00:00.000Z', '2026-01-05T00:00:00.000Z'],
      ['days', '2026-01-05T00:00:00.000Z', '2026-01-07T00:00:00.000Z'],
      ['hours', '2026-01-07T00:00:00.000Z', '2026-01-07T01:00:00.000Z'],
      ['minutes', '2026-01-07T01:00:00.000Z', '2026-01-07T01:30:00.000Z'],
    ]);
    expect(tile(from, from + 20 * 60_000, Infinity).map((p) => p.table)).to.deep.equal(['minutes']);
  });

  it('reads hour and day rows only before the hour they are rolled up to, minutes after it', () => {
    const from = Date.UTC(2026, 0, 4, 22, 30);
    const to = Date.UTC(2026, 0, 7, 1, 30);
    const plan = (rolledUpTo: number) => tile(from, to, rolledUpTo).map((p) => [p.table, iso(p.from), iso(p.to)]);
    // The last whole day's hours not all rolled up: its hours so far, no day row.
    expect(plan(Date.UTC(2026, 0, 6, 5))).to.deep.equal([
      ['minutes', '2026-01-04T22:30:00.000Z', '2026-01-04T23:00:00.000Z'],
      ['hours', '2026-01-04T23:00:00.000Z', '2026-01-05T00:00:00.000Z'],
      ['days', '2026-01-05T00:00:00.000Z', '2026-01-06T00:00:00.000Z'],
      ['hours', '2026-01-06T00:00:00.000Z', '2026-01-06T05:00:00.000Z'],
      ['minutes', '2026-01-06T05:00:00.000Z', '2026-01-07T01:30:00.000Z'],
    ]);
    expect(plan(Date.UTC(2026, 0, 7, 0))).to.deep.equal([
      ['minutes', '2026-01-04T22:30:00.000Z', '2026-01-04T23:00:00.000Z'],
      ['hours', '2026-01-04T23:00:00.000Z', '2026-01-05T00:00:00.000Z'],
      ['days', '2026-01-05T00:00:00.000Z', '2026-01-07T00:00:00.000Z'],
      ['minutes', '2026-01-07T00:00:00.000Z', '2026-01-07T01:30:00.000Z'],
    ]);
    // Nothing rolled up within the window: minutes throughout.
    expect(plan(Date.UTC(2026, 0, 4, 23))).to.deep.equal([['minutes', '2026-01-04T22:30:00.000Z', '2026-01-07T01:30:00.000Z']]);
    // A window ending in the future reads no rows of the open hour or day.
    const now = Date.UTC(2026, 0, 6, 12, 10);
    const ahead = planBuckets('1d', [[Date.UTC(2026, 0, 5), Date.UTC(2026, 0, 8)]], 'UTC', Date.UTC(2026, 0, 6, 12)).pieces;
    expect(ahead.filter((p) => p.table !== 'minutes').every((p) => p.to <= now - 10 * 60_000)).to.equal(true);
    expect(ahead.map((p) => p.table)).to.deep.equal(['days', 'hours', 'minutes']);
  });

  it('reads the open hour\'s rows to a mark inside the hour when the window holds all of them, minutes after the mark', () => {
    const mark = Date.UTC(2026, 0, 7, 1, 20);
    const plan = (from: number, to: number, interval: Parameters<typeof planBuckets>[0] = 'a') =>
      planBuckets(interval, [[from, to]], 'UTC', mark).pieces.map((p) => [p.table, iso(p.from), iso(p.to)]);
    expect(plan(Date.UTC(2026, 0, 6, 22, 30), Date.UTC(2026, 0, 7, 1, 27))).to.deep.equal([
      ['minutes', '2026-01-06T22:30:00.000Z', '2026-01-06T23:00:00.000Z'],
      ['hours', '2026-01-06T23:00:00.000Z', '2026-01-07T01:00:00.000Z'],
      ['open', '2026-01-07T01:00:00.000Z', '2026-01-07T01:20:00.000Z'],
      ['minutes', '2026-01-07T01:20:00.000Z', '2026-01-07T01:27:00.000Z'],
    ]);
    // From the hour itself, and in hour buckets too.
    expect(plan(Date.UTC(2026, 0, 7, 1), Date.UTC(2026, 0, 7, 1, 27), '1h').map((p) => p[0])).to.deep.equal(['open', 'minutes']);
    // Starting inside the hour, or ending before the mark: the rows hold minutes it must not count.
    expect(plan(Date.UTC(2026, 0, 7, 1, 5), Date.UTC(2026, 0, 7, 1, 27))).to.deep.equal([['minutes', '2026-01-07T01:05:00.000Z', '2026-01-07T01:27:00.000Z']]);
    expect(plan(Date.UTC(2026, 0, 7, 0), Date.UTC(2026, 0, 7, 1, 10)).map((p) => p[0])).to.deep.equal(['hours', 'minutes']);
    // Buckets finer than an hour read minutes only.
    expect(plan(Date.UTC(2026, 0, 7, 0), Date.UTC(2026, 0, 7, 1, 27), '15m')).to.deep.equal([['minutes', '2026-01-07T00:00:00.000Z', '2026-01-07T01:27:00.000Z']]);
    // Any piece ends at the mark's hour, so whole-hour readers (RolledUp.through) never plan one.
    expect(tile(Date.UTC(2026, 0, 6), Date.UTC(2026, 0, 7, 1, 27), Date.UTC(2026, 0, 7, 1)).some((p) => p.table === 'open')).to.equal(false);
  });

  it('never reads rows coarser than the buckets in the zone', () => {
    const from = Date.UTC(2026, 0, 1);
    const to = Date.UTC(2026, 0, 31);
    const tables = (interval: Parameters<typeof planBuckets>[0], zone: string) => [...new Set(planBuckets(interval, [[from, to]], zone, Infinity).pieces.map((p) => p.table))].sort();
    expect(tables('1d', 'UTC')).to.deep.equal(['days']);
    expect(tables('1d', 'America/New_York')).to.deep.equal(['hours']); // whole-hour offset
    expect(tables('1d', 'Asia/Kolkata')).to.deep.equal(['minutes']); // +05:30
    expect(tables('1h', 'UTC')).to.deep.equal(['hours']);
    expect(tables('15m', 'UTC')).to.deep.equal(['minutes']);
    expect(tables('a', 'Asia/Kolkata')).to.deep.equal(['days']);
  });

  it('puts sessions in their zone, following daylight saving', () => {
    // 2026-03-08: US clocks go forward. Monday 2 March is before, Monday 9 March after.
    const now = DateTime.fromISO('2026-03-12T12:00', { zone: 'America/New_York' }).toMillis();
    const [[a, b]] = sessionRanges('market-hours', [{ week: 'this', day: 1 }], 'America/New_York', now) as [[number, number]];
    expect([iso(a), iso(b)]).to.deep.equal(['2026-03-09T13:30:00.000Z', '2026-03-09T20:00:00.000Z']);
    const [[c, d]] = sessionRanges('market-hours', [{ week: 'last', day: 1 }], 'America/New_York', now) as [[number, number]];
    expect([iso(c), iso(d)]).to.deep.equal(['2026-03-02T14:30:00.000Z', '2026-03-02T21:00:00.000Z']);
  });

  it('clips sessions to now, runs blue-ocean past midnight and keeps weekend-hours to weekends', () => {
    const now = DateTime.fromISO('2026-03-11T11:00', { zone: 'America/New_York' }).toMillis(); // a Wednesday
    expect(sessionRanges('market-hours', [{ week: 'this', day: 3 }], 'America/New_York', now).map(([x, y]) => [iso(x), iso(y)])).to.deep.equal([
      ['2026-03-11T13:30:00.000Z', '2026-03-11T15:00:00.000Z'],
    ]);
    expect(sessionRanges('market-hours', [{ week: 'this', day: 5 }], 'America/New_York', now)).to.deep.equal([]); // Friday: not yet
    const [[x, y]] = sessionRanges('blue-ocean', [{ week: 'last', day: 2 }], 'America/New_York', now) as [[number, number]];
    expect([iso(x), iso(y)]).to.deep.equal(['2026-03-04T01:00:00.000Z', '2026-03-04T09:00:00.000Z']);
    expect(sessionRanges('weekend-hours', [{ week: 'last', day: 1 }], 'America/New_York', now)).to.deep.equal([]);
    const [[s, e]] = sessionRanges('weekend-hours', [{ week: 'last', day: 6 }], 'America/New_York', now) as [[number, number]];
    expect(e - s).to.equal(D);
  });

  it('aligns weeks to Monday and months to the 1st, in the zone', () => {
    const t = Date.UTC(2026, 4, 14, 3, 0); // Thursday 14 May 03:00 UTC
    expect(iso(bucketStart('1w', t, 'UTC'))).to.equal('2026-05-11T00:00:00.000Z');
    expect(iso(bucketStart('1M', t, 'UTC'))).to.equal('2026-05-01T00:00:00.000Z');
    expect(iso(bucketStart('1d', t, 'America/New_York'))).to.equal('2026-05-13T04:00:00.000Z');
    expect(iso(bucketStart('4h', t, 'UTC'))).to.equal('2026-05-14T00:00:00.000Z');
  });

  it('lists the buckets a window falls in, with its minutes in each, as bucketStart places them', () => {
    const show = (interval: Parameters<typeof bucketsOf>[0], ranges: [number, number][], zone: string) =>
      bucketsOf(interval, ranges, zone).map((b) => [iso(b.start), iso(b.end), ...b.ranges.map(([f, t]) => `${iso(f)}/${iso(t)}`)]);
    // Clipped at both ends, seconds rounded up to the minute a minute row starts at.
    expect(show('1h', [[Date.UTC(2026, 0, 5, 10, 29, 30), Date.UTC(2026, 0, 5, 12, 15)]], 'UTC')).to.deep.equal([
      ['2026-01-05T10:00:00.000Z', '2026-01-05T11:00:00.000Z', '2026-01-05T10:30:00.000Z/2026-01-05T11:00:00.000Z'],
      ['2026-01-05T11:00:00.000Z', '2026-01-05T12:00:00.000Z', '2026-01-05T11:00:00.000Z/2026-01-05T12:00:00.000Z'],
      ['2026-01-05T12:00:00.000Z', '2026-01-05T13:00:00.000Z', '2026-01-05T12:00:00.000Z/2026-01-05T12:15:00.000Z'],
    ]);
    // 8 March 2026 in New York has 23 hours: 4h buckets count from midnight, the last ends at the next.
    const day = DateTime.fromISO('2026-03-08T00:00', { zone: 'America/New_York' }).toMillis();
    const fours = bucketsOf('4h', [[day, day + 23 * H]], 'America/New_York');
    expect(fours.map((b) => (b.end - b.start) / H)).to.deep.equal([4, 4, 4, 4, 4, 3]);
    for (const b of fours) expect(bucketStart('4h', b.ranges[0]![0], 'America/New_York')).to.equal(b.start);
    // Two sessions in one week: one bucket, two ranges.
    const mon = Date.UTC(2026, 4, 11, 13, 30);
    const weeks = bucketsOf('1w', [[mon, mon + 6.5 * H], [mon + D, mon + D + 6.5 * H]], 'UTC');
    expect(weeks).to.have.length(1);
    expect(weeks[0]!.ranges).to.have.length(2);
    expect([iso(weeks[0]!.start), iso(weeks[0]!.end)]).to.deep.equal(['2026-05-11T00:00:00.000Z', '2026-05-18T00:00:00.000Z']);
    // Months in a half-hour zone.
    const months = bucketsOf('1M', [[Date.UTC(2026, 0, 15), Date.UTC(2026, 2, 2)]], 'Asia/Kolkata');
    expect(months.map((b) => iso(b.start))).to.deep.equal(['2025-12-31T18:30:00.000Z', '2026-01-31T18:30:00.000Z', '2026-02-28T18:30:00.000Z']);
  });

  it('defaults to the last 24 hours with interval a, and guards spans per interval', () => {
    const now = Date.UTC(2026, 5, 1, 12, 34, 56);
    const windowOf = (raw: Record<string, unknown>) => parseRequest(raw, validators.any, now, Infinity).window;
    const w = windowOf({});
    expect(w.interval).to.equal('a');
    expect(w.ranges).to.deep.equal([[now - D, now]]);
    expect(() => windowOf({ interval: '1m', lookback: '1-month' })).to.throw();
    expect(windowOf({ interval: '1h', lookback: '1-month' }).plan.pieces.length).to.be.greaterThan(0);
  });
});
