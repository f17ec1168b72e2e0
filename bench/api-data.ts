// The data bench:api times its endpoints on, shared with bench:web (which times the web
// app's Markets view on the same data): the world (exchanges, assets, 300 pairs, a staff
// user and a regular user whose project owns 100 assets) and its minute history, generated
// inside ClickHouse with the processors' own rollups. A run with `--keep-data <folder>`
// writes a marker there, and a later run of either benchmark on that folder reuses the
// history instead of loading it again.
import fs from 'node:fs';
import path from 'node:path';
import { MAX_ASSETS } from '../api/resources/market/params.ts';
import { book, derivative, trade } from '../domain/market/families/index.ts';
import { Rollups } from '../domain/market/repositories/rollups.ts';
import { openClickHouse, type ClickHouse } from '../lib/clickhouse.ts';
import type { Config } from '../lib/config.ts';
import { benchWorld, fmtInt, fmtMs, say, settle, withUser, type BenchWorld } from './common.ts';
import { writeMinutes } from './market-history.ts';

/**
 * The regular user's project owns MAX_ASSETS assets, the most a regular user may name in a
 * request (specification 4.1, 4.7): the endpoints answer it on its organization's assets,
 * so its requests read only their pairs.
 */
export const apiWorld = (pairs: number) => withUser(benchWorld({ pairs, exchangePrefix: 'ex' }), { assets: MAX_ASSETS });

export interface Loaded {
  bookRows: number;
  tradeRows: number;
  derivativeRows: number;
  ms: number;
}

const TABLES = ['book_minutes', 'book_hours', 'book_days', 'trade_minutes', 'trade_hours', 'trade_days', 'derivative_minutes', 'derivative_hours', 'derivative_days'];

/**
 * The history of `days` days for every pair of the world, up to the current minute: loaded
 * (on `connections` connections at once), or the one a kept folder already holds for the
 * same pairs and days. Merges are settled before it returns, as timed requests should not
 * run beside them.
 */
export async function ensureHistory(
  bench: string,
  config: Config,
  world: BenchWorld,
  opts: { pairs: number; days: number; connections: number; keep: boolean; settleSeconds: number },
): Promise<Loaded> {
  const loader = openClickHouse(config, 'bench-load');
  const loaders = Array.from({ length: opts.connections }, (_, i) => openClickHouse(config, `bench-load-${i}`));
  try {
    const marker = path.join(config.dataDir, 'bench-history.json');
    const previous = fs.existsSync(marker) ? (JSON.parse(fs.readFileSync(marker, 'utf8')) as Loaded & { pairs: number; days: number; at: string }) : undefined;
    let loaded: Loaded;
    if (previous && previous.pairs === opts.pairs && previous.days === opts.days) {
      loaded = previous;
      say(bench, `reusing the history loaded at ${previous.at} in ${config.dataDir} (windows ending now miss what came after)`);
    } else {
      if (previous || (await minuteRows(loader)) > 0) throw new Error(`${config.dataDir} already holds other history: give --keep-data a new folder`);
      loaded = await loadHistory(bench, loader, loaders, world, opts.days);
      if (opts.keep) fs.writeFileSync(marker, JSON.stringify({ ...loaded, pairs: opts.pairs, days: opts.days, at: new Date().toISOString() }));
    }
    await settle(bench, loader, opts.settleSeconds, TABLES);
    return loaded;
  } finally {
    await Promise.allSettled([loader, ...loaders].map((c) => c.close()));
  }
}

/** Minute rows for every pair over the last `days` days, up to the current minute, a UTC day per insert, and their rollups. */
async function loadHistory(bench: string, ch: ClickHouse, conns: ClickHouse[], world: BenchWorld, days: number): Promise<Loaded> {
  const end = Math.floor(Date.now() / 60_000) * 60; // epoch s, the current minute (excluded)
  const start = end - days * 86_400;
  const all = world.pairs;
  const perps = all.filter((p) => p.market_type === 'perp');
  say(bench, `loading ${days} days of minute history for ${all.length} pairs (${fmtInt(days * 1440 * all.length)} book minute rows, trade and derivative minutes, their hour and day rollups)...`);
  const t0 = performance.now();
  // A day per insert, on several connections at once: each insert (and its rollup
  // recompute) runs on one core, so two keep both cores busy.
  // Chunks are UTC days (the first and last partial), so no hour or day row is shared by two.
  const chunks: [number, number][] = [];
  for (let s = start; s < end; ) {
    const e = Math.min(end, (Math.floor(s / 86_400) + 1) * 86_400);
    chunks.push([s, e]);
    s = e;
  }
  const total = chunks.length;
  // The processors recompute the hours and days of what they write (Rollups); so does the loader.
  let done = 0;
  const worker = async (conn: ClickHouse) => {
    for (let chunk = chunks.shift(); chunk !== undefined; chunk = chunks.shift()) {
      const [s, e] = chunk;
      const { booksMs, restMs } = await writeMinutes(conn, all, s, e);
      const tr = performance.now();
      const hours: number[] = [];
      for (let h = Math.floor(s / 3600) * 3600; h < e; h += 3600) hours.push(h * 1000);
      const keys = (ps: BenchWorld['pairs']) => ps.flatMap((p) => hours.map((minute) => ({ exchange: p.exchange, pair: p.pair, minute })));
      await new Rollups(conn, book).recompute(keys(all));
      await new Rollups(conn, trade).recompute(keys(all));
      await new Rollups(conn, derivative).recompute(keys(perps));
      done++;
      const elapsed = (performance.now() - t0) / 1000;
      say(
        bench,
        `  ${new Date(s * 1000).toISOString().slice(0, 16)} to ${new Date(e * 1000).toISOString().slice(11, 16)} (${done}/${total}): books ${fmtMs(booksMs)}, trades + derivatives ${fmtMs(restMs)}, rollups ${fmtMs(performance.now() - tr)}; ${elapsed.toFixed(0)} s so far, ~${((elapsed / done) * (total - done)).toFixed(0)} s to go`,
      );
    }
  };
  await Promise.all(conns.map(worker));
  const ms = performance.now() - t0;
  const count = async (table: string) => Number((await ch.query<{ n: number }>('SELECT count() AS n FROM {t:Identifier}', { t: table }))[0]?.n ?? 0);
  const loaded = { bookRows: await count('book_minutes'), tradeRows: await count('trade_minutes'), derivativeRows: await count('derivative_minutes'), ms };
  say(bench, `loaded ${fmtInt(loaded.bookRows)} book, ${fmtInt(loaded.tradeRows)} trade and ${fmtInt(loaded.derivativeRows)} derivative minute rows in ${fmtMs(ms)}`);
  return loaded;
}

/** Book minute rows written so far. */
export async function minuteRows(ch: ClickHouse): Promise<number> {
  return Number((await ch.query<{ n: number }>('SELECT count() AS n FROM book_minutes'))[0]?.n ?? 0);
}
