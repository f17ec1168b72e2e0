// bench:insert: how long a processor's flush holds the event loop while its minute rows
// are encoded for the insert (issue 18). At thousands of pairs a flush writes every pair's
// minute at once; the client encodes an array of rows as JSON in one go, and while it does,
// nothing else in the process runs: not the API's requests, not the other consumers.
// lib/clickhouse.ts hands the rows over in slices instead, with a turn of the event loop
// between them. Per run, the same closed minutes of real order books (20 levels a side):
//   baseline: encoding them in one piece, as the client does with an array (the stall it causes);
//   sliced:   the widest gap between 1 ms timers during the product's insert, and its time.
// Embedded ClickHouse in a temporary folder; no Kafka.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { book } from '../domain/market/families/book.ts';
import { MinuteRepository } from '../domain/market/repositories/minutes.ts';
import { openClickHouse } from '../lib/clickhouse.ts';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { migrate } from '../lib/migrate.ts';
import { QuoteRates } from '../domain/market/prices.ts';
import { orderBookSpec } from '../processors/orderbook/processor.ts';
import { MinuteWindows, type ClosedMinute } from '../processors/shell/minute-windows.ts';
import type { BookMinuteRow } from '../processors/orderbook/minute.ts';
import { BookGenerator, benchWorld, fmtMs, flags, machine, percentile, positiveInt, printTable, say, sleep } from './common.ts';

const NAME = 'bench:insert';
const opt = flags(
  NAME,
  {
    pairs: { default: '3000', help: 'pairs, each with one closed minute per run' },
    runs: { default: '6', help: 'runs, each with its own minutes' },
    snapshots: { default: '60', help: 'snapshots per pair and minute' },
  },
  'the event loop held by encoding a flush of every pair\'s minute: in one piece (the baseline) against the product\'s slices',
);
const PAIRS = positiveInt('pairs', opt.pairs);
const RUNS = positiveInt('runs', opt.runs);
const SNAPSHOTS = positiveInt('snapshots', opt.snapshots);

say(NAME, `machine: ${machine()}`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-bench-insert-'));
const ch = openClickHouse(loadConfig({ ...process.env, DATA_DIR: dir }), 'bench');
try {
  await migrate(ch, createLogger('warn', NAME));
  const world = benchWorld({ pairs: PAIRS, exchangePrefix: 'ins' });
  const books = new BookGenerator(world.pairs, 20);
  const spec = orderBookSpec(new QuoteRates());
  const windows = new MinuteWindows({ latenessMs: 1000, create: spec.create });
  const repo = new MinuteRepository<BookMinuteRow>(ch, book, () => Date.now());
  const t0 = Date.UTC(2026, 10, 20);
  const step = 60_000 / SNAPSHOTS;
  let offset = 0;
  let ts = t0;
  /** Feeds every pair up to `until` (epoch ms), closing the minutes the lateness has passed. */
  const feed = (until: number): void => {
    for (; ts < until; ts += step) {
      for (let i = 0; i < PAIRS; i++) {
        const m = books.book(i, ts);
        const c = spec.compute(m, ts);
        if (c.kind === 'ok') windows.accept(m.exchange, m.pair, ts, c.value, 0, String(offset++));
      }
    }
  };
  feed(t0 + 60_000 + 2_000);
  const whole: number[] = [];
  const gaps: number[] = [];
  const inserts: number[] = [];
  let bytes = 0;
  for (let run = 0; run < RUNS; run++) {
    const closed = windows.takeClosed() as ClosedMinute<BookMinuteRow>[];
    // The baseline: the rows as the insert sends them, encoded in one go (the client's array path).
    const closedAt = Date.now();
    const rows = closed.map((m) => ({ exchange: m.exchange, pair: m.pair, minute: Math.floor(m.minute / 1000), ...m.row, closed_at: closedAt }));
    let t = performance.now();
    const body = rows.map((r) => JSON.stringify(r) + '\n').join('');
    whole.push(performance.now() - t);
    bytes = body.length;
    // The product's insert of the same minutes, with a 1 ms timer watching the loop.
    await sleep(100);
    let widest = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      widest = Math.max(widest, now - last);
      last = now;
    }, 1);
    t = performance.now();
    await repo.insert(closed);
    inserts.push(performance.now() - t);
    await sleep(20);
    clearInterval(timer);
    gaps.push(widest);
    say(NAME, `run ${run + 1}/${RUNS}: ${closed.length} minute rows (${(bytes / 2 ** 20).toFixed(1)} MiB of JSON): in one piece ${fmtMs(whole[run]!)}; sliced, widest gap ${fmtMs(widest)}, insert ${fmtMs(inserts[run]!)}`);
    feed(ts + 60_000);
  }
  const median = (xs: number[]) => percentile(xs, 50);
  printTable(`Encoding a flush of ${PAIRS} pairs' book minutes, median of ${RUNS} runs`, [
    { figure: 'rows and JSON a flush', value: `${PAIRS} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB`, goal: '—', result: 'info' },
    { figure: 'baseline: encoded in one piece (the loop held that long)', value: fmtMs(median(whole)), goal: '—', result: 'info' },
    { figure: 'sliced: widest gap between 1 ms timers during the insert', value: `${fmtMs(median(gaps))} (${fmtMs(Math.min(...gaps))}-${fmtMs(Math.max(...gaps))}), ${(median(gaps) / median(whole)).toFixed(2)} of the baseline`, goal: '—', result: 'info' },
    { figure: 'sliced: the insert, encoding and engine', value: `${fmtMs(median(inserts))} (${fmtMs(Math.min(...inserts))}-${fmtMs(Math.max(...inserts))})`, goal: '—', result: 'info' },
  ]);
} finally {
  await ch.close();
  fs.rmSync(dir, { recursive: true, force: true });
  say(NAME, `cleaned up (${dir} removed)`);
}
