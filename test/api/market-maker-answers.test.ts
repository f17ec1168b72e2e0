// Guards the answers of the market-maker endpoints (summary, trusted depth, reported
// volume, reconciliation): making them faster must answer these requests as recorded. Data
// and clock are fixed: the market-maker benchmark's world at a small size (4 market makers,
// one overstating depth and one volume, on 6 pairs), its history written straight into the
// tables by bench/market-makers/load.ts for fixed hours, and a second API over the service's
// dependencies whose deps.now() is FIXED. Each request is asked twice: the second answer may
// come from what the API keeps between requests and must equal the first.
//
// test/fixtures/market-maker-answers/answers.json keeps per case: status, content type, byte
// length and sha256 of the body with its numbers rounded (to 12 significant digits, then to
// 10: ClickHouse sums floats in an order that varies between runs).
//
// RECORD_MM_ANSWERS=1 rewrites answers.json. MM_ANSWERS_DIR=dir compares whole bodies,
// numbers to 1e-9 of their size, with those recorded there (written there when recording).
//   node ops/bootstrap.mjs test --no-config --require test/support/hooks.ts --exit test/api/market-maker-answers.test.ts
import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Zstd } from '@hpcc-js/wasm-zstd';
import { zstdFrameCount } from '../support/zstd-frames.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { MarketMakerCaches } from '../../api/resources/market-makers/sealed-rows.ts';
import { compressionIdle } from '../../api/http/compressed-pieces.ts';
import { loadHistory } from '../../bench/market-makers/load.ts';
import { mmWorld } from '../../bench/market-makers/world.ts';
import { call, login, seed } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';
import { NUMBER, roundedAnswer } from '../support/rounded-answers.ts';

const ANSWERS = fileURLToPath(new URL('../fixtures/market-maker-answers/answers.json', import.meta.url));
const RECORD = process.env.RECORD_MM_ANSWERS === '1';
const BODIES = process.env.MM_ANSWERS_DIR;
const HOUR = 3_600_000;
const DIGITS = 10;

/** The history: 2026-06-01 to 13:00 on the 10th; minute rows of three hours on the 3rd and of the clock's hour and those around it. */
const FROM = Date.UTC(2026, 5, 1);
const TO = Date.UTC(2026, 5, 10, 13);
const MINUTE_HOURS = [Date.UTC(2026, 5, 3, 5), Date.UTC(2026, 5, 3, 6), Date.UTC(2026, 5, 3, 7), Date.UTC(2026, 5, 10, 9), Date.UTC(2026, 5, 10, 10), Date.UTC(2026, 5, 10, 11)];
/** The API's clock: in the last day of the history, in an hour of minute rows. */
const FIXED = Date.UTC(2026, 5, 10, 10, 7, 30);

type Who = 'staff' | 'project' | 'maker';
interface Case {
  name: string;
  who: Who;
  path: string;
  params: Record<string, string>;
}

interface Answer {
  status: number;
  content_type: string | null;
  bytes: number;
  sha256: string;
}

const SUMMARY = '/v2/organizations/market-maker-metrics/summary/';
const DEPTH = '/v2/organizations/trusted-metrics/depth/';
const VOLUME = '/v2/organizations/reported-metrics/volume/';
const RECON = '/v2/organizations/market-maker-metrics/reconciliation/';

const iso = (t: number) => new Date(t).toISOString();
/** Seven whole days; the same cut by hours at both ends; a day; three hours of minute rows; the whole history. */
const WEEK = { time_start: iso(Date.UTC(2026, 5, 2)), time_end: iso(Date.UTC(2026, 5, 9)) };
const CUT = { time_start: iso(Date.UTC(2026, 5, 2, 5, 30)), time_end: iso(Date.UTC(2026, 5, 9, 17)) };
const DAY = { time_start: iso(Date.UTC(2026, 5, 3)), time_end: iso(Date.UTC(2026, 5, 4)) };
const MINUTES = { time_start: iso(Date.UTC(2026, 5, 3, 5)), time_end: iso(Date.UTC(2026, 5, 3, 8)) };
const ROLLING = { lookback: '7-days' };
const TEN_DAYS = { time_start: iso(FROM), time_end: iso(TO) };

function cases(assets: string): Case[] {
  const out: Case[] = [];
  const add = (name: string, who: Who, p: string, params: Record<string, string>) => out.push({ name, who, path: p, params: who === 'staff' ? { assets, ...params } : params });
  const windows: [string, Record<string, string>][] = [
    ['week', WEEK],
    ['cut week', CUT],
    ['rolling week', ROLLING],
  ];
  for (const [label, endpoint] of [
    ['summary', SUMMARY],
    ['reconciliation', RECON],
    ['trusted depth', DEPTH],
    ['reported volume', VOLUME],
  ] as const) {
    for (const [w, params] of windows) {
      add(`${label} 1d ${w}`, 'staff', endpoint, { interval: '1d', ...params });
      add(`${label} a ${w}`, 'staff', endpoint, { interval: 'a', ...params });
    }
    add(`${label} 1h day`, 'staff', endpoint, { interval: '1h', ...DAY });
    add(`${label} 5m minutes`, 'staff', endpoint, { interval: '5m', ...MINUTES });
    add(`${label} 1h rolling week`, 'staff', endpoint, { interval: '1h', ...ROLLING });
    add(`${label} 1d 3 levels`, 'staff', endpoint, { interval: '1d', bps: '2,10,100', ...CUT });
    add(`${label} 1h one level`, 'staff', endpoint, { interval: '1h', bps: '50', ...DAY });
    add(`${label} 1d csv`, 'staff', endpoint, { interval: '1d', bps: '1,25', type: 'csv', filename: 'x.csv', ...CUT });
    add(`${label} 1d project`, 'project', endpoint, { interval: '1d', ...ROLLING });
    add(`${label} 1d maker`, 'maker', endpoint, { interval: '1d', bps: '5,20', ...CUT });
  }
  // Ten days: enough blocks to be computed in two halves at once (sealed-answer.ts).
  add('summary 1d ten days', 'staff', SUMMARY, { interval: '1d', ...TEN_DAYS });
  add('reconciliation 1d ten days', 'staff', RECON, { interval: '1d', ...TEN_DAYS });
  add('summary 1h ten days project', 'project', SUMMARY, { interval: '1h', ...TEN_DAYS });
  add('summary 1w as daily', 'staff', SUMMARY, { interval: '1w', ...WEEK });
  add('reported volume 1w as daily', 'staff', VOLUME, { interval: '1w', ...WEEK });
  add('reconciliation 1d tolerance 40', 'staff', RECON, { interval: '1d', tolerance_pct: '40', ...WEEK });
  add('reconciliation a csv', 'staff', RECON, { interval: 'a', type: 'csv', filename: 'r.csv', ...CUT });
  add('summary a csv project', 'project', SUMMARY, { interval: 'a', type: 'csv', filename: 's.csv', ...CUT });
  // Days of a zone 5.5 hours ahead, from half an hour after a local midnight: the UTC day
  // then begun reaches into the window from the local day before its first, whose rows the
  // first block holds (sealed-answer.ts).
  const ZONED = { market_hours_timezone: 'Asia/Kolkata', time_start: iso(Date.UTC(2026, 5, 1, 19)), time_end: iso(Date.UTC(2026, 5, 8, 18, 30)) };
  add('reconciliation 1d zoned', 'staff', RECON, { interval: '1d', ...ZONED });
  add('summary 1d zoned', 'staff', SUMMARY, { interval: '1d', ...ZONED });
  return out;
}

const rounded = (text: string, csv: boolean): string => roundedAnswer(text, csv, DIGITS);

/** Where two bodies differ beyond 1e-9 of a number's size (the first place), or undefined. */
function difference(want: string, got: string, csv: boolean): string | undefined {
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  if (csv) {
    const [w, g] = [want.split('\n'), got.split('\n')];
    if (w.length !== g.length) return `${g.length} lines, not ${w.length}`;
    for (let i = 0; i < w.length; i++) {
      const [a, b] = [w[i]!.split(','), g[i]!.split(',')];
      if (a.length !== b.length) return `line ${i}: ${b.length} cells, not ${a.length}`;
      for (let j = 0; j < a.length; j++) {
        if (a[j] === b[j]) continue;
        if (!(NUMBER.test(a[j]!) && NUMBER.test(b[j]!) && close(Number(a[j]), Number(b[j])))) return `line ${i} cell ${j}: ${b[j]}, not ${a[j]}`;
      }
    }
    return undefined;
  }
  const walk = (a: unknown, b: unknown, at: string): string | undefined => {
    if (typeof a === 'number' && typeof b === 'number') return close(a, b) ? undefined : `${at}: ${b}, not ${a}`;
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) return `${at}: ${b.length} items, not ${a.length}`;
      for (let i = 0; i < a.length; i++) {
        const d = walk(a[i], b[i], `${at}[${i}]`);
        if (d) return d;
      }
      return undefined;
    }
    if (a && b && typeof a === 'object' && typeof b === 'object') {
      const [ka, kb] = [Object.keys(a), Object.keys(b)];
      if (ka.join() !== kb.join()) return `${at}: keys ${kb.join()}, not ${ka.join()}`;
      for (const k of ka) {
        const d = walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}.${k}`);
        if (d) return d;
      }
      return undefined;
    }
    return a === b ? undefined : `${at}: ${JSON.stringify(b)}, not ${JSON.stringify(a)}`;
  };
  return walk(JSON.parse(want), JSON.parse(got), '');
}

const fileSafe = (name: string) => name.replace(/[^\w.-]+/g, '_');

/** GET with a token and an Accept-Encoding, the body as sent. */
function getEncoded(url: URL, token: string, encoding?: string): Promise<{ encoding: string | undefined; vary: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { Authorization: `Token ${token}`, ...(encoding ? { 'Accept-Encoding': encoding } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], vary: res.headers.vary, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describe('market-maker answers, recorded: the four endpoints on fixed data at a fixed clock', function () {
  this.timeout(300_000);
  const world = mmWorld({ pairs: 6, makers: 4 });
  const all = cases(world.pairs.map((p) => p.asset).filter((a, i, xs) => xs.indexOf(a) === i).join(','));
  const tokens = {} as Record<Who, string>;
  let api: RunningApi;
  /** The same API keeping nothing between requests, and one whose clock moves. */
  let uncached: RunningApi;
  let moving: RunningApi;
  let clock = FIXED;
  const movingCaches = new MarketMakerCaches();
  const recorded: Record<string, Answer> = {};
  const expected = fs.existsSync(ANSWERS) ? (JSON.parse(fs.readFileSync(ANSWERS, 'utf8')) as { clock: string; cases: Record<string, Answer> }) : undefined;

  before(async () => {
    const { service } = testStack();
    await seed(world.fixture);
    await loadHistory([service.deps.ch], world, { from: FROM, to: TO, minuteHours: MINUTE_HOURS, now: FIXED, reportedFrom: FROM }, () => {});
    for (const who of ['staff', 'project', 'maker'] as const) tokens[who] = await login(world.users[who].email, world.users[who].password);
    api = await startApi({ ...service.deps, now: () => FIXED }, '127.0.0.1', 0);
    uncached = await startApi({ ...service.deps, now: () => FIXED, marketMakerCaches: new MarketMakerCaches(0) }, '127.0.0.1', 0);
    moving = await startApi({ ...service.deps, now: () => clock, marketMakerCaches: movingCaches }, '127.0.0.1', 0);
    if (BODIES && RECORD) fs.mkdirSync(BODIES, { recursive: true });
  });

  after(async () => {
    await Promise.all([api?.close(), uncached?.close(), moving?.close()]);
    if (RECORD && Object.keys(recorded).length === all.length) {
      fs.mkdirSync(path.dirname(ANSWERS), { recursive: true });
      const file = { about: 'Answers of the market-maker endpoints, written by test/api/market-maker-answers.test.ts with RECORD_MM_ANSWERS=1.', clock: iso(FIXED), cases: recorded };
      fs.writeFileSync(ANSWERS, `${JSON.stringify(file, null, 1)}\n`);
    }
  });

  if (!RECORD) it('has a recording of every case (RECORD_MM_ANSWERS=1 writes it)', () => {
    expect(expected, `no recording at ${ANSWERS}`).to.not.equal(undefined);
    expect(Object.keys(expected!.cases)).to.deep.equal(all.map((c) => c.name));
    expect(expected!.clock).to.equal(iso(FIXED));
  });

  for (const c of all) {
    it(c.name, async () => {
      const url = `${c.path}?${new URLSearchParams(c.params)}`;
      const [first, again] = [await call('GET', url, { token: tokens[c.who], baseUrl: api.url }), await call('GET', url, { token: tokens[c.who], baseUrl: api.url })];
      const csv = c.params.type === 'csv';
      expect(first.status, first.text.slice(0, 300)).to.equal(200);
      expect(difference(first.text, again.text, csv), `${c.name}: asked again`).to.equal(undefined);
      const direct = await call('GET', url, { token: tokens[c.who], baseUrl: uncached.url });
      expect(difference(direct.text, first.text, csv), `${c.name}: against the answer computed whole`).to.equal(undefined);
      const body = rounded(first.text, csv);
      const answer: Answer = { status: first.status, content_type: first.headers.get('content-type'), bytes: Buffer.byteLength(body), sha256: crypto.createHash('sha256').update(body).digest('hex') };
      const file = BODIES ? path.join(BODIES, `${fileSafe(c.name)}.body`) : undefined;
      if (RECORD) {
        recorded[c.name] = answer;
        if (file) fs.writeFileSync(file, first.text);
        return;
      }
      if (file && fs.existsSync(file)) expect(difference(fs.readFileSync(file, 'utf8'), first.text, csv), `${c.name}: against ${file}`).to.equal(undefined);
      expect(answer, `${c.name}: against the recording`).to.deep.equal(expected?.cases[c.name]);
    });
  }

  it('sends the same text plain, zstd or gzipped: plain until kept pieces are compressed after a first answer to a client taking it, then compressed; zstd unless gzip weighs more', async () => {
    const url = new URL(`${SUMMARY}?${new URLSearchParams({ interval: '1d', bps: '3,15,30', ...WEEK, assets: all[0]!.params.assets! })}`, api.url);
    const get = (encoding?: string) => getEncoded(url, tokens.staff, encoding);
    const wasm = await Zstd.load();
    const decode = { gzip: (b: Buffer) => zlib.gunzipSync(b), zstd: (b: Buffer) => Buffer.from(wasm.decompress(b)) };
    const plain = await get();
    expect(plain.encoding).to.equal(undefined);
    expect(JSON.parse(plain.body.toString())).to.be.an('array').that.is.not.empty;
    // First asked with gzip (levels no case asked): nothing compressed yet, so the text as it is.
    const first = await get('gzip');
    expect(first.encoding).to.equal(undefined);
    expect(first.vary).to.match(/Accept-Encoding/i);
    expect(first.body.equals(plain.body)).to.equal(true);
    for (const [accepted, sent] of [
      ['gzip', 'gzip'],
      ['deflate, gzip, br, zstd', 'zstd'],
      ['gzip;q=0.5, identity;q=0.1', 'gzip'],
      ['zstd;q=0.5, gzip', 'gzip'],
      ['zstd', 'zstd'],
      ['*', 'zstd'],
    ] as const) {
      let r = await get(accepted);
      for (let i = 0; i < 50 && (r.encoding !== sent || r.body.length >= plain.body.length * 0.75); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        r = await get(accepted);
      }
      expect(r.encoding, accepted).to.equal(sent);
      expect(decode[sent](r.body).equals(plain.body), accepted).to.equal(true);
      expect(r.body.length, accepted).to.be.lessThan(plain.body.length * 0.75);
    }
    expect((await get('br')).encoding).to.equal(undefined);
    // In zstd, a market maker's pair's sealed days go as one frame (two with the comma
    // before it), not a frame per day.
    const rows = JSON.parse(plain.body.toString()) as { organization: { slug: string }; asset: string; exchange: string; pair: string; timestamp: string }[];
    const cells = new Set(rows.map((r) => [r.organization.slug, r.asset, r.exchange, r.pair].join('|'))).size;
    const days = new Set(rows.map((r) => r.timestamp.slice(0, 10))).size;
    expect(days).to.equal(7);
    const frames = 2 + 2 * cells - 1;
    let zstd = await get('zstd');
    // Runs are compressed in the background, a batch at a time.
    for (let i = 0; i < 50 && zstdFrameCount(zstd.body) !== frames; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      zstd = await get('zstd');
    }
    expect(zstd.encoding).to.equal('zstd');
    expect(zstdFrameCount(zstd.body)).to.equal(frames);
    expect(decode.zstd(zstd.body).equals(plain.body)).to.equal(true);
  });

  it('in zstd, answers a moving window compressed at once when the hour moves: a run holds sealed whole days, not the sealed part of today', async () => {
    const wasm = await Zstd.load();
    const urlAt = (t: number) => new URL(`${SUMMARY}?${new URLSearchParams({ interval: '1h', time_start: iso(Date.UTC(2026, 5, 8)), time_end: iso(t), assets: all[0]!.params.assets! })}`, moving.url);
    try {
      // 10:07:30: today's sealed part is 00:00-10:00; 11:07:30: 00:00-11:00, another piece.
      for (const t of [Date.UTC(2026, 5, 10, 10, 7, 30), Date.UTC(2026, 5, 10, 11, 7, 30)]) {
        clock = t;
        const plain = await getEncoded(urlAt(t), tokens.staff);
        expect(new Set((JSON.parse(plain.body.toString()) as { timestamp: string }[]).map((r) => r.timestamp.slice(0, 10)))).to.have.property('size', 3);
        const zstd = await getEncoded(urlAt(t), tokens.staff, 'zstd');
        expect((zstd.encoding === 'zstd' ? Buffer.from(wasm.decompress(zstd.body)) : zstd.body).equals(plain.body)).to.equal(true);
        // The first hour: not compressed yet, the text as it is; an hour later the runs of the 8th and 9th sent as they were kept.
        expect(zstd.encoding, new Date(t).toISOString()).to.equal(t === Date.UTC(2026, 5, 10, 10, 7, 30) ? undefined : 'zstd');
        await compressionIdle();
      }
    } finally {
      clock = FIXED;
    }
  });

  // Last: it writes into the history.
  it('keeps blocks by their write counts: a counted write into the open bucket shows at once, a sealed bucket comes from the cache, the open block serves a later end', async () => {
    const { service } = testStack();
    const wallet = world.wallets[0]!;
    const pair = world.pairs.find((p) => p.exchange === wallet.exchange)!;
    // The clock's hour at 5m: 10:00-10:05 is open at 10:07:30 (sealed before 10:04:30).
    clock = Date.UTC(2026, 5, 10, 10, 7, 30);
    const params = new URLSearchParams({ interval: '5m', time_start: iso(Date.UTC(2026, 5, 10, 9)), time_end: iso(clock), assets: pair.asset, organizations: wallet.organization });
    const url = `${SUMMARY}?${params}`;
    const volumeAt = (rows: { wallet_id: number | null; timestamp: string; volume: number }[], t: number) =>
      rows.find((r) => r.wallet_id === wallet.id && r.timestamp === iso(t).replace('.000Z', 'Z'))?.volume;
    const before = await call('GET', url, { token: tokens.staff, baseUrl: moving.url });
    expect(before.status).to.equal(200);
    const again = await call('GET', url, { token: tokens.staff, baseUrl: moving.url });
    expect(again.text).to.equal(before.text);
    const open = Date.UTC(2026, 5, 10, 10, 0);
    const sealed = Date.UTC(2026, 5, 10, 9, 0);
    const [openVolume, sealedVolume] = [volumeAt(before.body, open), volumeAt(before.body, sealed)];
    expect(openVolume, 'a row of the open bucket').to.be.a('number');
    // The open block read to a later end, nothing written since: from what was kept.
    const [hits, misses] = [movingCaches.summary.hits, movingCaches.summary.misses];
    clock = Date.UTC(2026, 5, 10, 10, 7, 45);
    const laterEnd = await call('GET', url.replace(encodeURIComponent(iso(Date.UTC(2026, 5, 10, 10, 7, 30))), encodeURIComponent(iso(clock))), { token: tokens.staff, baseUrl: moving.url });
    expect(laterEnd.text).to.equal(before.text);
    expect(movingCaches.summary.misses, 'every block kept').to.equal(misses);
    expect(movingCaches.summary.hits).to.be.above(hits);
    clock = Date.UTC(2026, 5, 10, 10, 7, 30);
    // A new version of a minute in each bucket, as a late write would be, with the write count
    // the processors add only for the open bucket's hour: the sealed one's text is kept.
    for (const minute of [open + 60_000, sealed + 60_000]) {
      await service.deps.ch.command(
        `INSERT INTO trusted_volume_minutes (exchange, pair, wallet_id, minute, fills, amount, volume_usd, usd_fills, closed_at)
         VALUES ({exchange:String}, {pair:String}, {wallet:UInt64}, toDateTime({minute:UInt32}, 'UTC'), 1000, 1, 1000000, 1000, now64(3))`,
        { exchange: pair.exchange, pair: pair.pair, wallet: wallet.id, minute: minute / 1000 },
      );
    }
    await service.deps.ch.command(`INSERT INTO market_writes (source, hour, writes) VALUES ('trusted_volume_minutes', toDateTime({hour:UInt32}, 'UTC'), 1)`, { hour: open / 1000 });
    const after = await call('GET', url, { token: tokens.staff, baseUrl: moving.url });
    expect(volumeAt(after.body, open), 'the open bucket is read again').to.be.above(openVolume! + 999_000);
    expect(volumeAt(after.body, sealed), 'the sealed bucket comes from what was kept').to.equal(sealedVolume);
    // Once the open bucket is sealed it is kept too, with what it holds then.
    clock = Date.UTC(2026, 5, 10, 10, 9, 0);
    const later = await call('GET', url.replace(encodeURIComponent(iso(Date.UTC(2026, 5, 10, 10, 7, 30))), encodeURIComponent(iso(clock))), { token: tokens.staff, baseUrl: moving.url });
    expect(volumeAt(later.body, open)).to.equal(volumeAt(after.body, open));
  });
});
