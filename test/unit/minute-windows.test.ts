import { expect } from 'chai';
import { DateTime } from 'luxon';
import { MinuteWindows } from '../../processors/shell/minute-windows.ts';
import { Count } from '../support/count.ts';
import { parseTimestamp } from '../../schemas/timestamps.ts';
import { createAjv } from '../../schemas/index.ts';
import { lineToMessage } from '../../ingest/orderbook-lines.ts';
import { rng } from '../../ingest/synthetic/market.ts';

const M = 60_000;
const T0 = 1_700_000_040_000 - (1_700_000_040_000 % M); // a minute start
function windows(now = { t: T0 }) {
  const w = new MinuteWindows<number, { n: number; sum: number }, Count>({ latenessMs: 2 * M, create: () => new Count(), now: () => now.t });
  w.load([], new Map());
  return w;
}

describe('minute windows', () => {
  it('closes a minute once the pair is past its end by the lateness, in event time', () => {
    const w = windows();
    expect(w.accept('x', 'A/B', T0 + 1000, 1, 0, '0').kind).to.equal('ok');
    expect(w.accept('x', 'A/B', T0 + 2 * M, 2, 0, '1').kind).to.equal('ok');
    expect(w.takeClosed()).to.have.length(0);
    w.accept('x', 'A/B', T0 + 3 * M, 3, 0, '2'); // T0's end + 2 min
    const closed = w.takeClosed();
    expect(closed.map((c) => [c.minute, c.row])).to.deep.equal([[T0, { n: 1, sum: 1 }]]);
  });

  it('counts out-of-order data within the lateness in its own minute and dead-letters older data', () => {
    const w = windows();
    w.accept('x', 'A/B', T0 + 2 * M + 5000, 1, 0, '0');
    expect(w.accept('x', 'A/B', T0 + 30_000, 2, 0, '1').kind).to.equal('ok'); // 95 s behind: fine
    const late = w.accept('x', 'A/B', T0 - 1000, 3, 0, '2');
    expect(late.kind).to.equal('dead-letter');
    expect(late.kind === 'dead-letter' && late.reason).to.match(/^late: 126 s behind the newest event of x A\/B/);
    expect(w.accept('y', 'A/B', T0 - 1000, 3, 0, '3').kind).to.equal('ok'); // another pair has its own clock
  });

  it('never reopens a closed minute: late for new offsets, re-read for handled ones', () => {
    const w = windows();
    w.load([{ exchange: 'x', pair: 'A/B', minute: T0 }], new Map([[0, 10n]]));
    const reread = w.accept('x', 'A/B', T0 + 5, 1, 0, '9');
    expect(reread).to.deep.equal({ kind: 'skip', reason: 're-read' });
    const late = w.accept('x', 'A/B', T0 + 5, 1, 0, '10');
    expect(late.kind).to.equal('dead-letter');
    expect(w.accept('x', 'A/B', T0 + M, 1, 0, '11').kind).to.equal('ok');
  });

  it('commits no further than the first message of a minute not yet written', () => {
    const w = windows();
    w.accept('x', 'A/B', T0, 1, 0, '5');
    w.accept('y', 'C/D', T0, 1, 0, '6');
    w.accept('x', 'A/B', T0 + 3 * M, 1, 0, '7'); // closes x's T0 (pending, not written)
    expect(w.commitPoint(0, 8n)).to.equal(5n);
    const closed = w.takeClosed();
    expect(w.commitPoint(0, 8n)).to.equal(5n); // taken but not written yet
    w.persisted(closed, new Map([[0, 8n]]));
    expect(w.commitPoint(0, 8n)).to.equal(6n); // y's T0 is still open
    expect(w.commitPoint(1, 3n)).to.equal(3n); // other partitions are not held back
  });

  it('closes the minutes of a quiet pair: soon for a replayed recording, after the lateness when live', () => {
    const now = { t: T0 + 3600_000 };
    const w = windows(now);
    w.accept('x', 'OLD/B', T0, 1, 0, '0'); // an hour old: a recording
    w.accept('x', 'LIVE/B', now.t - 1000, 1, 0, '1');
    now.t += 6000;
    w.closeIdle(new Map([[0, 6000]]));
    expect(w.takeClosed().map((c) => c.pair)).to.deep.equal(['OLD/B']);
    now.t += 2 * M;
    w.closeIdle(new Map([[0, 2 * M]]));
    expect(w.takeClosed().map((c) => c.pair)).to.deep.equal(['LIVE/B']);
  });

  it('counts a replayed pair\'s silence only in time its partition was read, not in time stalled', () => {
    const now = { t: T0 + 3600_000 };
    const w = windows(now);
    w.accept('x', 'OLD/B', T0, 1, 0, '0');
    w.accept('x', 'OLD/C', T0, 1, 1, '0');
    // A minute of wall time: partition 0 was held (a slow write), partition 1 read 6 s of it.
    now.t += M;
    w.closeIdle(new Map([[0, 0], [1, 6000]]));
    expect(w.takeClosed().map((c) => c.pair)).to.deep.equal(['OLD/C']);
    // OLD/B's next message of the same minute, read after the stall, still counts in it.
    expect(w.accept('x', 'OLD/B', T0 + 1000, 2, 0, '1').kind).to.equal('ok');
    w.closeIdle(new Map([[0, 4000]]));
    expect(w.takeClosed()).to.have.length(0);
    w.closeIdle(new Map([[0, 1000]]));
    expect(w.takeClosed().map((c) => c.row)).to.deep.equal([{ n: 2, sum: 3 }]);
  });

  it('waits for every partition that fed a replayed pair to be read for the silence', () => {
    const w = windows({ t: T0 + 3600_000 });
    w.accept('x', 'OLD/B', T0, 1, 0, '0');
    w.accept('x', 'OLD/B', T0 + 1000, 1, 1, '0');
    w.closeIdle(new Map([[0, 6000]]));
    expect(w.takeClosed()).to.have.length(0);
    w.closeIdle(new Map([[1, 6000]]));
    expect(w.takeClosed().map((c) => c.row)).to.deep.equal([{ n: 2, sum: 2 }]);
  });

  it('keeps a live pair\'s minute open through a silence shorter than the minute, with a short lateness', () => {
    const now = { t: T0 + 5_000 };
    const w = new MinuteWindows<number, { n: number; sum: number }, Count>({ latenessMs: 10_000, create: () => new Count(), now: () => now.t });
    w.load([], new Map());
    expect(w.accept('x', 'D/B', T0 + 5_000, 1, 0, '0').kind).to.equal('ok');
    now.t = T0 + 30_000; // 25 s of silence, longer than the lateness
    w.closeIdle();
    expect(w.takeClosed()).to.have.length(0);
    expect(w.accept('x', 'D/B', T0 + 30_000, 2, 0, '1').kind).to.equal('ok');
    now.t = T0 + M + 9_000;
    w.closeIdle();
    expect(w.takeClosed()).to.have.length(0);
    now.t = T0 + M + 10_000; // the minute's end plus the lateness
    w.closeIdle();
    expect(w.takeClosed().map((c) => c.row)).to.deep.equal([{ n: 2, sum: 3 }]);
  });

  it('forgets what a partition built, so its re-delivery does not count twice', () => {
    const w = windows();
    w.accept('x', 'A/B', T0, 1, 0, '0');
    w.accept('y', 'C/D', T0, 1, 1, '0');
    w.forget(0);
    expect(w.openMinutes()).to.equal(1);
    w.accept('x', 'A/B', T0, 1, 0, '0');
    w.accept('x', 'A/B', T0 + 3 * M, 1, 0, '1');
    expect(w.takeClosed()[0]!.row).to.deep.equal({ n: 1, sum: 1 });
  });
});

describe('minute windows, against a model of what a commit point must hold back', () => {
  // The windows keep their commit points and due minutes in indexes rather than walking
  // every pair; this drives them at random (live and replayed pairs, pairs fed by two
  // partitions, late data, failed and partial writes, a partition revoked and re-read) and
  // after every step holds them to the plain definition: a partition's commit point is the
  // oldest first offset, in it, of a minute neither written nor dropped.
  interface Entry {
    first: Map<number, bigint>;
    n: number;
    state: 'open' | 'closed' | 'written' | 'dropped';
  }

  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`agrees with the model through 3,000 random steps (seed ${seed})`, () => {
      const random = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      const PARTITIONS = [0, 1, 2];
      const clock = { t: T0 + 3 * 3600_000 };
      const w = new MinuteWindows<number, { n: number; sum: number }, Count>({ latenessMs: 20_000, historicalIdleMs: 5_000, create: () => new Count(), now: () => clock.t });
      w.load([], new Map());
      // Pairs 0-7 live, 8-11 replaying a recording two hours old; 3 and 9 fed by two partitions.
      const pairs = Array.from({ length: 12 }, (_, i) => ({
        name: `P${i}/Q`,
        partitions: i === 3 || i === 9 ? [1, 2] : [i % 3],
        lag: i >= 8 ? 2 * 3600_000 : 0,
        gen: 0,
        seen: new Set<number>(),
      }));
      const nextOffset = new Map(PARTITIONS.map((p) => [p, 0n]));
      const entries = new Map<string, Entry>();
      const entryKey = (pair: string, gen: number, minute: number) => `${pair}|${gen}|${minute}`;
      const current = (pair: string, minute: number) => entries.get(entryKey(pair, pairs.find((x) => x.name === pair)!.gen, minute));
      let inflight: ReturnType<typeof w.takeClosed> = [];

      const take = () => {
        for (const c of w.takeClosed()) {
          const e = current(c.pair, c.minute);
          expect(e, `${c.pair} ${c.minute} closed unknown`).to.not.equal(undefined);
          expect(e!.state, `${c.pair} ${c.minute}`).to.be.oneOf(['open', 'closed']);
          expect(c.row.n, `${c.pair} ${c.minute} messages`).to.equal(e!.n);
          e!.state = 'closed';
          inflight.push(c);
        }
      };
      const check = (step: number) => {
        for (const p of PARTITIONS) {
          const next = nextOffset.get(p)!;
          let want = next;
          for (const e of entries.values()) {
            const o = e.first.get(p);
            if ((e.state === 'open' || e.state === 'closed') && o !== undefined && o < want) want = o;
          }
          expect(w.commitPoint(p, next), `step ${step}, partition ${p}`).to.equal(want);
        }
        expect(w.openMinutes(), `step ${step}, open minutes`).to.equal([...entries.values()].filter((e) => e.state === 'open').length);
      };

      for (let step = 0; step < 3000; step++) {
        const r = random();
        if (r < 0.7) {
          const pair = pick(pairs);
          const partition = pick(pair.partitions);
          const offset = nextOffset.get(partition)!;
          nextOffset.set(partition, offset + 1n);
          // Mostly in order; now and then up to 30 s behind (within or past the lateness).
          const ts = clock.t - pair.lag - (random() < 0.1 ? Math.floor(random() * 30_000) : Math.floor(random() * 2_000));
          const out = w.accept('x', pair.name, ts, 1, partition, String(offset));
          if (out.kind === 'ok') {
            const minute = ts - (ts % M);
            const k = entryKey(pair.name, pair.gen, minute);
            const e = entries.get(k) ?? { first: new Map(), n: 0, state: 'open' as const };
            entries.set(k, e);
            expect(e.state, `step ${step}: accepted into a ${e.state} minute`).to.equal('open');
            if (!e.first.has(partition)) e.first.set(partition, offset);
            e.n++;
            pair.seen.add(partition);
          }
        } else if (r < 0.85) {
          const ms = Math.floor(random() * 4_000);
          clock.t += ms;
          w.closeIdle(new Map(PARTITIONS.map((p) => [p, random() < 0.8 ? ms : 0])));
        } else if (r < 0.95) {
          // A write: some of what was taken lands, the rest fails and is handed back.
          const landed = inflight.slice(0, Math.floor(random() * (inflight.length + 1)));
          w.persisted(landed, new Map());
          for (const c of landed) current(c.pair, c.minute)!.state = 'written';
          w.returnClosed(inflight.slice(landed.length));
          inflight = [];
        } else {
          // A partition revoked: what it fed is dropped and read again from its commit point.
          w.returnClosed(inflight);
          inflight = [];
          const p = pick(PARTITIONS);
          const rewind = w.commitPoint(p, nextOffset.get(p)!);
          w.forget(p);
          for (const pair of pairs) {
            if (!pair.seen.has(p)) continue;
            for (const [k, e] of entries) if (k.startsWith(`${pair.name}|${pair.gen}|`) && (e.state === 'open' || e.state === 'closed')) e.state = 'dropped';
            pair.gen++;
            pair.seen = new Set();
          }
          nextOffset.set(p, rewind);
        }
        take();
        check(step);
      }
      // Everything closes in the end, and once written holds nothing back.
      clock.t += 3600_000;
      w.closeIdle(new Map(PARTITIONS.map((p) => [p, 3600_000])));
      take();
      w.persisted(inflight, new Map());
      for (const c of inflight) current(c.pair, c.minute)!.state = 'written';
      inflight = [];
      check(3000);
      expect(w.openMinutes()).to.equal(0);
      for (const p of PARTITIONS) expect(w.commitPoint(p, nextOffset.get(p)!)).to.equal(nextOffset.get(p));
    });
  }
});

describe('event time', () => {
  it('parses ISO 8601 (UTC when no offset) and epoch ms', () => {
    expect(parseTimestamp('2026-06-25T10:19:23.474Z')).to.equal(Date.UTC(2026, 5, 25, 10, 19, 23, 474));
    expect(parseTimestamp('2026-06-25T10:19:23.474')).to.equal(Date.UTC(2026, 5, 25, 10, 19, 23, 474));
    expect(parseTimestamp('2026-06-25T12:19:23.474+02:00')).to.equal(Date.UTC(2026, 5, 25, 10, 19, 23, 474));
    expect(parseTimestamp(1782382763474)).to.equal(1782382763474);
    expect(parseTimestamp('not a time')).to.equal(undefined);
  });

  it('reads the toISOString form on its fast path exactly as luxon reads it', () => {
    const luxon = (s: string) => {
      const dt = DateTime.fromISO(s, { zone: 'utc', setZone: true });
      return dt.isValid ? dt.toMillis() : undefined;
    };
    const cases = [
      '2026-06-25T10:19:23.474Z',
      '2026-06-25T10:19:23Z',
      '2024-02-29T23:59:59.999Z',
      '2026-02-29T00:00:00Z', // not a leap year
      '2026-02-30T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-01-00T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01T23:60:00Z',
      '2026-01-01T23:59:60Z',
      '1999-12-31T23:59:59.000Z',
      '2000-02-29T12:00:00Z',
      '2100-02-29T12:00:00Z',
    ];
    for (const s of cases) expect(parseTimestamp(s), s).to.equal(luxon(s));
    expect(parseTimestamp('2024-02-29T23:59:59.999Z')).to.equal(Date.UTC(2024, 1, 29, 23, 59, 59, 999));
    expect(parseTimestamp('2026-02-29T00:00:00Z')).to.equal(undefined);
  });

  it('lets the contracts\' iso-instant format pass exactly the times luxon reads, a query string\'s lost "+" put back', () => {
    const valid = createAjv().compile({ type: 'string', format: 'iso-instant' });
    const cases = ['2026-06-25T10:19:23.474Z', '2026-02-29T00:00:00Z', '2026-01-01T23:59:60Z', '0999-01-01T00:00:00Z', '2026-06-25T12:19:23+02:00', '2026-06-25T12:19', '2026-06-25', 'not a time', ''];
    for (const s of cases) expect(valid(s), s).to.equal(DateTime.fromISO(s, { zone: 'utc', setZone: true }).isValid);
    expect(valid('2026-06-25T12:19:23 02:00')).to.equal(true);
    expect(valid('2026-13-25T12:19:23 02:00')).to.equal(false);
  });
});

describe('replay lines', () => {
  it('converts recorder lines {t, b, a} with --exchange and --pair', () => {
    const m = lineToMessage('{"t":1,"b":[[1,2]],"a":[[3,4]]}', { exchange: 'coinbase', pair: 'BTC/USD' });
    expect(m.key).to.equal('coinbase:BTC/USD');
    expect(JSON.parse(m.value)).to.deep.equal({ exchange: 'coinbase', pair: 'BTC/USD', ts: 1, bids: [[1, 2]], asks: [[3, 4]] });
    expect(() => lineToMessage('{"t":1,"b":[],"a":[]}', {})).to.throw(/--exchange and --pair/);
  });

  it('passes addendum-format lines through and garbage as it is', () => {
    const line = '{"exchange":"x","pair":"A/B","ts":1,"bids":[],"asks":[]}';
    expect(lineToMessage(line, {})).to.deep.equal({ key: 'x:A/B', value: line });
    expect(lineToMessage('garbage', { exchange: 'x', pair: 'A/B' })).to.deep.equal({ key: 'x:A/B', value: 'garbage' });
  });
});
