// Guards the answers of the five market endpoints (/v2/metrics/summary/, /v2/leaderboard/,
// /v2/metrics/uptime/spread/, /v2/metrics/uptime/depth/, /v2/metrics/volume/regional/): a
// restructuring of the market code must answer these requests exactly as recorded. Data and
// clock are fixed: the Coinbase recording (../shared/data) as one pair and a seeded synthetic
// day of 20 pairs (books, trades, perpetual data), sent through Kafka; a second API over the
// service's dependencies whose deps.now() is FIXED. Names are unique per run (q<tag>/Q<TAG>)
// and replaced by placeholders of the same length before comparing.
//
// test/fixtures/market-answers/answers.json keeps per case: status, content type (and
// Content-Disposition), byte length and sha256 of the body, and the body when under 4 KB.
//
// Compared as raw bytes: depth uptime, spread uptime at 1m, the 400s. Rounded first (numbers
// to 12 significant digits, then to 10; `rounded()` below): summary, leaderboard, regional
// volume and spread uptime at 5m and up, whose floats ClickHouse sums in an order that varies
// between runs (between fresh stacks, a few hundred numbers differed in their last bit, and
// nothing else). Twice, because a single rounding flips whenever the last bit moves on values
// that are exact decimals (means of prices on a tick, e.g. 31710.130625).
//
// RECORD_MARKET_ANSWERS=1 rewrites answers.json; without it a mismatch writes the actual
// bodies to a temporary folder named in the failure. MARKET_ANSWERS_DUMP=dir writes every
// body there. This file alone (`npm test -- <file>` would run the whole suite as well):
//   node ops/bootstrap.mjs test --no-config --require test/support/hooks.ts --exit test/api/market-answers.test.ts
import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApi, type RunningApi } from '../../api/server.ts';
import { rng } from '../../ingest/synthetic/market.ts';
import { topicName } from '../../lib/kafka.ts';
import { call, login, seed, waitFor } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';
import { roundedAnswer } from '../support/rounded-answers.ts';

const RECORDING = fileURLToPath(new URL('../../../shared/data/coinbase-btcusd-book.jsonl', import.meta.url));
const ANSWERS = fileURLToPath(new URL('../fixtures/market-answers/answers.json', import.meta.url));
const RECORD = process.env.RECORD_MARKET_ANSWERS === '1';
const DUMP = process.env.MARKET_ANSWERS_DUMP;
const INLINE_BYTES = 4096;
const DIGITS = 10;

/** The synthetic day: 26 hours across the UTC midnight of 2026-06-24/25 (a Wednesday/Thursday). */
const SYN_FROM = Date.UTC(2026, 5, 24, 8, 10);
const SYN_TO = Date.UTC(2026, 5, 25, 10, 10);
/** The API's clock: after the synthetic day and the Coinbase recording (10:19-10:32 on the 25th). */
const FIXED = Date.UTC(2026, 5, 25, 11, 7, 30);

// ---------------------------------------------------------------------------------------
// Names: unique per run, replaced by placeholders of the same length in what is compared.
const tag = crypto.randomBytes(3).toString('hex');
const TAG = tag.toUpperCase();
const normalizeNames = (s: string) => s.replaceAll(`q${tag}`, 'qtagtag').replaceAll(`Q${TAG}`, 'QTAGTAG');
const exchange = (name: string) => `q${tag}-${name}`;
const asset = (name: string) => `Q${TAG}-${name}`;

const EXCHANGES: { name: string; region: string }[] = [
  { name: 'alpha', region: 'asia' },
  { name: 'bravo', region: 'europe' },
  { name: 'charlie', region: 'north-america' },
  { name: 'delta', region: 'asia' },
  { name: 'echo', region: 'south-america' },
  { name: 'coinbase', region: 'north-america' },
];

interface AssetSpec {
  name: string;
  price: number;
  /** Decimal places of prices and of amounts. */
  pdp: number;
  adp: number;
}
const ASSETS: AssetSpec[] = [
  { name: 'ONE', price: 100, pdp: 2, adp: 3 },
  { name: 'TWO', price: 2.5, pdp: 4, adp: 1 },
  { name: 'THREE', price: 31_000, pdp: 1, adp: 5 },
  { name: 'FOUR', price: 0.8, pdp: 5, adp: 0 },
  { name: 'ONE_PERP', price: 100.05, pdp: 2, adp: 3 },
  { name: 'TWO_PERP', price: 2.5012, pdp: 4, adp: 1 },
];

interface PairSpec {
  ex: string;
  base: string;
  quote: 'USDT' | 'USD' | 'USDC';
  /** Seconds between snapshots. */
  step: number;
  /** Half spread, bps, before noise and regimes. */
  hs: number;
  /** Distance between levels, bps, before noise. */
  gap: number;
  levels: number;
  /** USD size of a level, before noise. */
  usd: number;
  /** Trades per snapshot step, on average (0: none). */
  trades: number;
  /** Silent over [from, to) (ms). */
  quiet?: [number, number];
}
const H = (day: 24 | 25, h: number, m = 0) => Date.UTC(2026, 5, day, h, m);
const SYN_PAIRS: PairSpec[] = [
  { ex: 'alpha', base: 'ONE', quote: 'USDT', step: 20, hs: 0.4, gap: 0.8, levels: 14, usd: 30_000, trades: 1.2 },
  { ex: 'bravo', base: 'ONE', quote: 'USDT', step: 30, hs: 1.5, gap: 3, levels: 12, usd: 18_000, trades: 0.8 },
  { ex: 'charlie', base: 'ONE', quote: 'USDT', step: 30, hs: 3, gap: 6, levels: 10, usd: 50_000, trades: 0.6 },
  { ex: 'delta', base: 'ONE', quote: 'USDT', step: 30, hs: 6, gap: 15, levels: 9, usd: 9_000, trades: 0.4 },
  { ex: 'echo', base: 'ONE', quote: 'USDT', step: 30, hs: 10, gap: 30, levels: 8, usd: 70_000, trades: 0.3, quiet: [H(25, 2, 10), H(25, 4, 40)] },
  { ex: 'charlie', base: 'ONE', quote: 'USD', step: 30, hs: 0.8, gap: 2, levels: 12, usd: 25_000, trades: 0.9 },
  { ex: 'alpha', base: 'TWO', quote: 'USDT', step: 20, hs: 2, gap: 5, levels: 12, usd: 12_000, trades: 1 },
  { ex: 'bravo', base: 'TWO', quote: 'USDT', step: 30, hs: 5, gap: 10, levels: 10, usd: 40_000, trades: 0.5 },
  { ex: 'delta', base: 'TWO', quote: 'USDT', step: 30, hs: 12, gap: 25, levels: 8, usd: 5_000, trades: 0.2 },
  { ex: 'echo', base: 'TWO', quote: 'USDC', step: 30, hs: 1, gap: 4, levels: 10, usd: 20_000, trades: 0.7 },
  { ex: 'alpha', base: 'THREE', quote: 'USDT', step: 30, hs: 0.3, gap: 0.5, levels: 15, usd: 60_000, trades: 1.5 },
  { ex: 'charlie', base: 'THREE', quote: 'USDT', step: 30, hs: 2.5, gap: 8, levels: 10, usd: 35_000, trades: 0.6 },
  { ex: 'echo', base: 'THREE', quote: 'USDT', step: 30, hs: 8, gap: 20, levels: 8, usd: 15_000, trades: 0.3 },
  { ex: 'bravo', base: 'THREE', quote: 'USD', step: 30, hs: 1.2, gap: 3, levels: 12, usd: 45_000, trades: 0.8, quiet: [H(25, 6), H(25, 10, 10)] },
  { ex: 'bravo', base: 'FOUR', quote: 'USDT', step: 30, hs: 20, gap: 40, levels: 8, usd: 8_000, trades: 0.5, quiet: [H(24, 8, 10), H(24, 14)] },
  { ex: 'delta', base: 'FOUR', quote: 'USDT', step: 30, hs: 35, gap: 60, levels: 6, usd: 4_000, trades: 0 },
  { ex: 'alpha', base: 'ONE_PERP', quote: 'USDT', step: 20, hs: 0.6, gap: 1, levels: 14, usd: 80_000, trades: 1.4 },
  { ex: 'bravo', base: 'ONE_PERP', quote: 'USDT', step: 30, hs: 2, gap: 5, levels: 10, usd: 30_000, trades: 0.7 },
  { ex: 'charlie', base: 'TWO_PERP', quote: 'USDT', step: 30, hs: 4, gap: 9, levels: 10, usd: 20_000, trades: 0.5 },
  { ex: 'delta', base: 'TWO_PERP', quote: 'USDT', step: 30, hs: 9, gap: 18, levels: 8, usd: 10_000, trades: 0 },
];
const pairName = (p: { base: string; quote: string }) => `${asset(p.base)}/${p.quote}`;
const BTC_PAIR = `${asset('BTC')}/USD`;

// ---------------------------------------------------------------------------------------
// The seeded generator: the synthetic market's mulberry32, and only + - * / and rounding
// (no Math.exp, no **), so every run and every platform makes the same numbers.
const fix = (x: number, dp: number) => Number(x.toFixed(dp));
/** 10^-dp parsed, not computed: V8's 10 ** -4 is 0.00009999999999999999. */
const unit = (dp: number) => Number(`1e-${dp}`);

type Level = [number, number];
interface Book {
  ts: number;
  bids: Level[];
  asks: Level[];
}
interface TradeMsg {
  ts: number;
  price: number;
  amount: number;
  side: 'buy' | 'sell';
  id: string;
}
interface DerivativeMsg {
  ts: number;
  funding_rate_8h?: number;
  usd_open_interest?: number;
}

function generatePair(spec: PairSpec, index: number): { books: Book[]; trades: TradeMsg[]; derivatives: DerivativeMsg[] } {
  const a = ASSETS.find((x) => x.name === spec.base)!;
  const r = rng(1000 + index * 7919);
  const tick = unit(a.pdp);
  const drift = ((index % 5) - 2) * 0.000012;
  const badHour = (index * 5) % 24;
  let mid = a.price * (1 + (index % 7) * 0.001);
  const books: Book[] = [];
  const trades: TradeMsg[] = [];
  for (let t = SYN_FROM; t < SYN_TO; t += spec.step * 1000) {
    mid *= 1 + (r() - 0.5) * 0.0016 + drift;
    const hour = new Date(t).getUTCHours();
    const regime = hour >= 2 && hour < 4 ? 4 : hour === badHour ? 10 : 1;
    const half = (mid * spec.hs * regime * (0.5 + r())) / 1e4;
    const bestBid = fix(Math.floor((mid - half) / tick) * tick, a.pdp);
    let bestAsk = fix(Math.ceil((mid + half) / tick) * tick, a.pdp);
    if (bestAsk <= bestBid) bestAsk = fix(bestBid + tick, a.pdp);
    const side = (best: number, sign: -1 | 1): Level[] => {
      const out: Level[] = [];
      let price = best;
      for (let k = 0; k < spec.levels; k++) {
        if (k > 0) {
          const next = fix(price + (sign * mid * spec.gap * (0.5 + r())) / 1e4, a.pdp);
          price = sign < 0 ? Math.min(next, fix(price - tick, a.pdp)) : Math.max(next, fix(price + tick, a.pdp));
        }
        const amount = Math.max(fix((spec.usd * (0.2 + 1.6 * r())) / price, a.adp), unit(a.adp));
        out.push([price, amount]);
      }
      return out;
    };
    const bids = side(bestBid, -1);
    const asks = side(bestAsk, 1);
    const quiet = spec.quiet && t >= spec.quiet[0] && t < spec.quiet[1];
    const ts = t + Math.floor(r() * 1000);
    if (!quiet) books.push({ ts, bids, asks });
    // Trades after the snapshot, at its best prices.
    const n = spec.trades === 0 ? 0 : Math.floor(r() * 2 * spec.trades + 0.5);
    for (let j = 0; !quiet && j < n; j++) {
      const buy = r() < 0.5;
      const price = buy ? bestAsk : bestBid;
      trades.push({ ts: ts + 1000 + j * 700, price, amount: Math.max(fix((spec.usd * 0.1 * (0.05 + r())) / price, a.adp), unit(a.adp)), side: buy ? 'buy' : 'sell', id: `${index}-${trades.length}` });
    }
  }
  const derivatives: DerivativeMsg[] = [];
  if (spec.base.endsWith('_PERP')) {
    const d = rng(5000 + index);
    const oiBase = spec.usd * 400;
    for (let t = SYN_FROM + 5 * 60_000, k = 0; t < SYN_TO; t += 10 * 60_000, k++) {
      const funding = fix((d() - 0.4) * 0.002, 6);
      const oi = fix(oiBase * (0.8 + 0.4 * d()), 0);
      const last = t + 10 * 60_000 >= SYN_TO;
      // Now and then one of the two alone.
      if (!last && k % 7 === 3) derivatives.push({ ts: t, funding_rate_8h: funding });
      else if (!last && k % 11 === 5) derivatives.push({ ts: t, usd_open_interest: oi });
      else derivatives.push({ ts: t, funding_rate_8h: funding, usd_open_interest: oi });
    }
  }
  return { books, trades, derivatives };
}

function readRecording(): Book[] {
  if (!fs.existsSync(RECORDING)) throw new Error(`the Coinbase recording is not at ${RECORDING} (../shared/data beside the checkout)`);
  return fs
    .readFileSync(RECORDING, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const { t, b, a } = JSON.parse(l) as { t: number; b: Level[]; a: Level[] };
      return { ts: t, bids: b, asks: a };
    });
}

// ---------------------------------------------------------------------------------------
// The cases.
type Params = Record<string, string | number | (string | number)[]>;
interface Case {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  params: Params;
  /** type=csv&filename=<csv> in the query string. */
  csv?: string;
  /** Numbers rounded before comparing (see the header); set by rounded() in cases(). */
  round?: boolean;
}

const iso = (t: number) => new Date(t).toISOString();
const span = (from: number, to: number) => ({ time_start: iso(from), time_end: iso(to) });
const SPREAD = '/v2/metrics/uptime/spread/';
const DEPTH = '/v2/metrics/uptime/depth/';
const SUMMARY = '/v2/metrics/summary/';
const LEADERBOARD = '/v2/leaderboard/';
const REGIONAL = '/v2/metrics/volume/regional/';

function cases(): Case[] {
  const ALL = [...ASSETS.map((x) => asset(x.name)), asset('BTC')];
  const SYN = ASSETS.map((x) => asset(x.name));
  // Windows start and end mid-hour (1m's mid-minute too), and cross 2026-06-25T00:00Z.
  const W: Record<string, Params> = {
    '1m': span(Date.UTC(2026, 5, 24, 23, 41, 30), H(25, 0, 18)),
    '5m': span(H(24, 23, 7), H(25, 1, 23)),
    '15m': span(H(24, 22, 20), H(25, 2, 40)),
    '30m': span(H(24, 21, 45), H(25, 3, 15)),
    '1h': span(H(24, 18, 30), H(25, 6, 30)),
    '4h': span(H(24, 8, 35), H(25, 10, 47)),
    // Whole UTC days inside: day rows.
    '1d': span(Date.UTC(2026, 5, 23, 22, 50), Date.UTC(2026, 5, 26, 1, 10)),
    '1w': span(Date.UTC(2026, 5, 10, 9, 30), Date.UTC(2026, 6, 1, 16, 30)),
    '1M': span(Date.UTC(2026, 4, 20, 12, 30), Date.UTC(2026, 6, 3, 7, 30)),
    c: span(H(24, 8, 35), H(25, 10, 47)),
    a: span(H(24, 8, 35), H(25, 10, 47)),
  };
  const BROAD = W.a!;
  const out: Case[] = [];
  /** Whose floats ClickHouse sums in a varying order (see the header). */
  const rounded = (c: Case) =>
    !c.name.startsWith('400') && c.path !== DEPTH && !(c.path === SPREAD && c.params.interval === '1m');
  const add = (c: Case) => out.push({ ...c, round: rounded(c) });

  // Spread and depth uptime at every interval.
  for (const interval of Object.keys(W)) {
    add({ name: `spread ${interval}`, method: 'GET', path: SPREAD, params: { assets: ALL, interval, ...W[interval] } });
  }
  for (const interval of Object.keys(W)) {
    add({ name: `depth ${interval}`, method: 'GET', path: DEPTH, params: { assets: ALL, interval, ...W[interval] } });
  }
  add({ name: 'spread 1h POST', method: 'POST', path: SPREAD, params: { assets: ALL, interval: '1h', ...W['1h'] } });
  add({ name: 'spread 15m bps subset', method: 'GET', path: SPREAD, params: { assets: [asset('ONE'), asset('THREE')], interval: '15m', bps: '0.25,2,10,100', ...W['15m'] } });
  // Depth: other amounts (from minutes), a subset of levels.
  add({ name: 'depth 1h amounts POST', method: 'POST', path: DEPTH, params: { assets: SYN, interval: '1h', amounts: [12345.5, 60000, 300000], ...W['1h'] } });
  add({ name: 'depth 1h amounts GET', method: 'GET', path: DEPTH, params: { assets: SYN, interval: '1h', amounts: '12345.5,60000,300000', ...W['1h'] } });
  add({ name: 'depth a amounts bps', method: 'POST', path: DEPTH, params: { assets: ALL, amounts: '12345.5,60000', bps: [5, 50, 500], ...BROAD } });
  add({ name: 'depth 4h bps subset', method: 'GET', path: DEPTH, params: { assets: ALL, interval: '4h', bps: '1,10,100', ...BROAD } });
  add({ name: 'depth c amounts', method: 'GET', path: DEPTH, params: { assets: [asset('ONE'), asset('FOUR')], interval: 'c', amounts: '75000', bps: '20,200', ...W.c } });

  // Time zones.
  add({ name: 'spread 1d New_York', method: 'GET', path: SPREAD, params: { assets: ALL, interval: '1d', market_hours_timezone: 'America/New_York', time_start: '2026-06-24T00:00:00-04:00', time_end: '2026-06-26T00:00:00-04:00' } });
  add({ name: 'depth 4h Kolkata', method: 'GET', path: DEPTH, params: { assets: SYN, interval: '4h', market_hours_timezone: 'Asia/Kolkata', bps: '2,25', ...BROAD } });
  add({ name: 'spread c London', method: 'GET', path: SPREAD, params: { assets: ALL, interval: 'c', market_hours_timezone: 'Europe/London', bps: '0.5,5,50', ...W['1d'] } });
  add({ name: 'spread 1h Kolkata offset', method: 'GET', path: SPREAD, params: { assets: SYN, interval: '1h', market_hours_timezone: 'Asia/Kolkata', time_start: '2026-06-25T00:10:00+05:30', time_end: '2026-06-25T11:50:00+05:30' } });

  // Trading sessions (FIXED is Thursday 07:07 in New York, 12:07 in London).
  add({ name: 'spread 1h pre-market New_York', method: 'GET', path: SPREAD, params: { assets: ALL, interval: '1h', market_hours_session: 'pre-market', market_hours_days: 'this:3,this:4,last:3', market_hours_timezone: 'America/New_York' } });
  add({ name: 'depth a market-hours London', method: 'POST', path: DEPTH, params: { assets: ALL, market_hours_session: 'market-hours', market_hours_days: ['this:3', 'this:4'], market_hours_timezone: 'Europe/London' } });
  add({ name: 'spread 30m market-hours default zone', method: 'GET', path: SPREAD, params: { assets: SYN, interval: '30m', bps: '1,10', market_hours_session: 'market-hours', market_hours_days: 'this:3' } });
  add({ name: 'summary pre-market New_York', method: 'GET', path: SUMMARY, params: { assets: ALL, bps: '1,10', market_hours_session: 'pre-market', market_hours_days: 'this:3,this:4', market_hours_timezone: 'America/New_York' } });
  add({ name: 'summary market-hours London', method: 'POST', path: SUMMARY, params: { assets: ALL, market_hours_session: 'market-hours', market_hours_days: 'this:3,this:4,last:4', market_hours_timezone: 'Europe/London' } });

  // Lookbacks and the default window (the last 24 hours).
  add({ name: 'spread 4h lookback 1-day', method: 'GET', path: SPREAD, params: { assets: ALL, interval: '4h', lookback: '1-day' } });
  add({ name: 'depth 1h lookback 12-hours', method: 'GET', path: DEPTH, params: { assets: SYN, interval: '1h', bps: '5,50', lookback: '12-hours' } });
  add({ name: 'summary lookback 7-days', method: 'GET', path: SUMMARY, params: { assets: ALL, bps: '2,20', lookback: '7-days' } });
  add({ name: 'summary default window', method: 'GET', path: SUMMARY, params: { assets: ALL, bps: '0,500' } });

  // Summary.
  add({ name: 'summary a', method: 'GET', path: SUMMARY, params: { assets: ALL, interval: 'a', ...BROAD } });
  add({ name: 'summary bps subset GET', method: 'GET', path: SUMMARY, params: { assets: ALL, bps: '0.5,25,0.05', ...BROAD } });
  add({ name: 'summary bps subset POST', method: 'POST', path: SUMMARY, params: { assets: ALL, bps: [0.5, 25, 0.05], ...BROAD } });
  add({ name: 'summary coinbase', method: 'GET', path: SUMMARY, params: { assets: asset('BTC'), bps: '0.05,1,5,50', ...span(H(25, 10, 15), H(25, 10, 40)) } });
  add({ name: 'spread 1m coinbase', method: 'GET', path: SPREAD, params: { assets: asset('BTC'), interval: '1m', bps: '0,0.05,0.1,0.5,1', ...span(H(25, 10, 15), H(25, 10, 40)) } });
  add({ name: 'depth 5m coinbase', method: 'GET', path: DEPTH, params: { assets: asset('BTC'), interval: '5m', amounts: '25000,1000000', ...span(H(25, 10, 15), H(25, 10, 40)) } });

  // Leaderboard.
  const lb = { assets: ALL, ...BROAD };
  add({ name: 'leaderboard volume desc POST', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [1] } });
  add({ name: 'leaderboard volume desc GET', method: 'GET', path: LEADERBOARD, params: { ...lb, bps: '1', sort_by: 'volume', sort_direction: 'desc' } });
  add({ name: 'leaderboard volume asc', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [1], sort_by: 'volume', sort_direction: 'asc' } });
  add({ name: 'leaderboard price_change desc', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [5], sort_by: 'price_change' } });
  add({ name: 'leaderboard price_change asc', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [5], sort_by: 'price_change', sort_direction: 'asc' } });
  add({ name: 'leaderboard tick_bps asc', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [0.5], sort_by: 'tick_bps', sort_direction: 'asc' } });
  add({ name: 'leaderboard tick_bps desc', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [0.5], sort_by: 'tick_bps', sort_direction: 'desc' } });
  add({ name: 'leaderboard funding_rate_8h desc', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [10], sort_by: 'funding_rate_8h' } });
  add({ name: 'leaderboard usd_open_interest asc', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [10], sort_by: 'usd_open_interest', sort_direction: 'asc' } });
  add({ name: 'leaderboard bid_1bps desc', method: 'POST', path: LEADERBOARD, params: { ...lb, sort_by: 'bid_1bps' } });
  add({ name: 'leaderboard ask_0.5bps asc', method: 'GET', path: LEADERBOARD, params: { ...lb, bps: '0.5,1', sort_by: 'ask_0.5bps', sort_direction: 'asc' } });
  add({ name: 'leaderboard perp', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [2], market_type: 'perp' } });
  add({ name: 'leaderboard spot exchanges', method: 'GET', path: LEADERBOARD, params: { ...lb, bps: '2', market_type: 'spot', exchanges: `${exchange('alpha')},${exchange('charlie')}`, sort_by: 'price_change' } });
  add({ name: 'leaderboard page 2', method: 'POST', path: LEADERBOARD, params: { ...lb, bps: [1], page: 2 } });
  add({ name: 'leaderboard lookback 1-day', method: 'POST', path: LEADERBOARD, params: { assets: ALL, lookback: '1-day', bps: [3], sort_by: 'tick_bps' } });

  // Regional volume (JSON only: its CSV form is to change).
  add({ name: 'regional a GET', method: 'GET', path: REGIONAL, params: { assets: ALL, ...BROAD } });
  add({ name: 'regional a POST', method: 'POST', path: REGIONAL, params: { assets: ALL, interval: 'a', ...BROAD } });
  add({ name: 'regional 1h', method: 'GET', path: REGIONAL, params: { assets: SYN, interval: '1h', ...W['1h'] } });
  add({ name: 'regional 1d', method: 'GET', path: REGIONAL, params: { assets: ALL, interval: '1d', ...W['1d'] } });
  add({ name: 'regional 1d Tokyo', method: 'POST', path: REGIONAL, params: { assets: ALL, interval: '1d', market_hours_timezone: 'Asia/Tokyo', ...W['1d'] } });
  add({ name: 'regional a lookback 7-days', method: 'GET', path: REGIONAL, params: { assets: ALL, lookback: '7-days' } });
  add({ name: 'regional 4h pre-market New_York', method: 'GET', path: REGIONAL, params: { assets: ALL, interval: '4h', market_hours_session: 'pre-market', market_hours_days: 'this:3,this:4', market_hours_timezone: 'America/New_York' } });

  // CSV.
  add({ name: 'summary CSV', method: 'GET', path: SUMMARY, params: { assets: ALL, ...BROAD }, csv: 'x.csv' });
  add({ name: 'leaderboard CSV', method: 'POST', path: LEADERBOARD, params: { ...lb, sort_by: 'price_change', bps: [1, 25] }, csv: 'board.csv' });
  add({ name: 'spread 1h CSV', method: 'GET', path: SPREAD, params: { assets: ALL, interval: '1h', ...W['1h'] }, csv: 'x.csv' });
  add({ name: 'depth 1d CSV', method: 'GET', path: DEPTH, params: { assets: ALL, interval: '1d', ...W['1d'] }, csv: 'depth (1d).csv' });
  add({ name: 'depth a amounts CSV POST', method: 'POST', path: DEPTH, params: { assets: ALL, amounts: [12345.5, 60000], bps: [5, 50], ...BROAD }, csv: 'x.csv' });

  // 400s.
  add({ name: '400 bad bps', method: 'GET', path: SPREAD, params: { assets: ALL, bps: '7', ...BROAD } });
  add({ name: '400 unknown asset', method: 'POST', path: SPREAD, params: { assets: [asset('ONE'), 'NOPE'], ...BROAD } });
  add({ name: '400 lookback with time_start', method: 'POST', path: SUMMARY, params: { assets: ALL, lookback: '1-day', time_start: BROAD.time_start! } });
  add({ name: '400 session with lookback', method: 'GET', path: DEPTH, params: { assets: ALL, lookback: '1-day', market_hours_session: 'pre-market', market_hours_days: 'this:1' } });
  add({ name: '400 bad interval', method: 'GET', path: SPREAD, params: { assets: ALL, interval: '2h', ...BROAD } });
  add({ name: '400 summary interval', method: 'GET', path: SUMMARY, params: { assets: ALL, interval: '1h', ...BROAD } });
  add({ name: '400 window too long for 1m', method: 'POST', path: SPREAD, params: { assets: ALL, interval: '1m', lookback: '1-month' } });
  add({ name: '400 amounts over 31 days', method: 'GET', path: DEPTH, params: { assets: ALL, interval: '1d', amounts: '12345', ...W['1M'] } });
  add({ name: '400 start after end', method: 'GET', path: REGIONAL, params: { assets: ALL, time_start: BROAD.time_end!, time_end: BROAD.time_start! } });
  add({ name: '400 sort_by', method: 'POST', path: LEADERBOARD, params: { ...lb, sort_by: 'bid_7bps' } });
  add({ name: '400 bad zone', method: 'GET', path: SPREAD, params: { assets: ALL, market_hours_timezone: 'Mars/Olympus' } });
  return out;
}

// ---------------------------------------------------------------------------------------
// What is compared.
interface Answer {
  request: string;
  status: number;
  content_type: string | null;
  content_disposition?: string;
  normalized: 'names' | 'names, numbers to 10 digits';
  bytes: number;
  sha256: string;
  /** The (normalized) body, when under INLINE_BYTES. */
  body?: string;
}
interface AnswersFile {
  about: string;
  clock: string;
  /** sha256 of the messages sent (names normalized): a change of the data shows as such. */
  data_sha256: string;
  cases: Record<string, Answer>;
}

const roundNumbers = (text: string, contentType: string | null): string => roundedAnswer(text, contentType?.startsWith('text/csv') === true, DIGITS);

function requestLine(c: Case): { url: string; init: { method: string; json?: unknown }; shown: string } {
  const csv = c.csv ? `type=csv&filename=${encodeURIComponent(c.csv)}` : '';
  if (c.method === 'GET') {
    const q = new URLSearchParams(Object.entries(c.params).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)])).toString();
    const url = `${c.path}?${[q, csv].filter(Boolean).join('&')}`;
    return { url, init: { method: 'GET' }, shown: normalizeNames(`GET ${decodeURIComponent(url)}`) };
  }
  const url = csv ? `${c.path}?${csv}` : c.path;
  return { url, init: { method: 'POST', json: c.params }, shown: normalizeNames(`POST ${decodeURIComponent(url)} ${JSON.stringify(c.params)}`) };
}

const fileSafe = (name: string) => name.replace(/[^\w.-]+/g, '_');

describe('market answers, recorded: the five endpoints on fixed data at a fixed clock', function () {
  // Loading takes 10-15 s on an idle machine; the limits leave room for a busy one.
  this.timeout(400_000);
  const all = cases();
  const project = `q${tag}-project`;
  const owner = { email: `q${tag}-owner@test.example`, username: `q${tag}-owner`, password: 'correct-horse-battery', organizations: [project] };
  let token: string;
  let api: RunningApi;
  const recorded: Record<string, Answer> = {};
  const expected: AnswersFile | undefined = !RECORD && fs.existsSync(ANSWERS) ? (JSON.parse(fs.readFileSync(ANSWERS, 'utf8')) as AnswersFile) : undefined;
  let mismatchDir: string | undefined;
  let dataSha256 = '';

  before(async function () {
    const recording = readRecording();
    const synthetic = SYN_PAIRS.map((p, i) => ({ spec: p, ...generatePair(p, i) }));
    const fixture: Parameters<typeof seed>[0] = {
      exchanges: EXCHANGES.map((e) => ({ slug: exchange(e.name), name: `${e.name[0]!.toUpperCase()}${e.name.slice(1)} q${tag}`, icon_url: `https://example.org/${e.name}.png`, region: e.region })),
      organizations: [{ slug: project, name: `Project q${tag}`, kind: 'project' }],
      assets: [...ASSETS.map((x) => ({ symbol: asset(x.name), name: x.name, owner: project })), { symbol: asset('BTC'), name: 'Bitcoin', owner: project }],
      pairs: [
        ...SYN_PAIRS.map((p) => ({ exchange: exchange(p.ex), pair: pairName(p), asset: asset(p.base), market_type: p.base.endsWith('_PERP') ? ('perp' as const) : ('spot' as const) })),
        { exchange: exchange('coinbase'), pair: BTC_PAIR, asset: asset('BTC'), market_type: 'spot' as const },
      ],
      users: [owner],
    };
    await seed(fixture);
    token = await login(owner.email, owner.password);

    const { kafka, config, service } = testStack();
    const data = crypto.createHash('sha256');
    const producer = kafka.producer();
    await producer.connect();
    try {
      const send = async (topic: 'md.orderbook' | 'md.trades' | 'md.derivatives', messages: { exchange: string; pair: string }[]) => {
        // Sends of at most ~500 kB: the broker takes batches up to 1 MB.
        let batch: { key: string; value: string }[] = [];
        let bytes = 0;
        const flush = async () => {
          if (batch.length) await producer.send({ topic: topicName(config, topic), messages: batch });
          batch = [];
          bytes = 0;
        };
        for (const m of messages) {
          const value = JSON.stringify(m);
          data.update(`${topic} ${normalizeNames(value)}\n`);
          batch.push({ key: `${m.exchange}:${m.pair}`, value });
          bytes += value.length;
          if (bytes > 500_000) await flush();
        }
        await flush();
      };
      const at = (p: PairSpec) => ({ exchange: exchange(p.ex), pair: pairName(p) });
      await send('md.orderbook', [
        ...recording.map((b) => ({ exchange: exchange('coinbase'), pair: BTC_PAIR, ...b })),
        // One exchange sends ISO timestamps, as market.test.ts does for one pair.
        ...synthetic.flatMap(({ spec, books }) => books.map((b) => ({ ...at(spec), ...b, ts: spec.ex === 'charlie' ? iso(b.ts) : b.ts }))),
      ]);
      await send('md.trades', synthetic.flatMap(({ spec, trades }) => trades.map((t) => ({ ...at(spec), ...t }))));
      await send('md.derivatives', synthetic.flatMap(({ spec, derivatives }) => derivatives.map((d) => ({ ...at(spec), ...d }))));
    } finally {
      await producer.disconnect();
    }
    dataSha256 = data.digest('hex');

    // Everything in the minute, hour and day rows: per pair, the snapshots over whole days
    // (day rows), over the broad window (hours and minutes), the trade volume, the latest
    // perpetual values over the first day and over both.
    const ALL = [...ASSETS.map((x) => asset(x.name)), asset('BTC')];
    type Expect = { samples: number; volume: number; funding: number | null; oi: number | null };
    const expectAt = (from: number, to: number) => {
      const m = new Map<string, Expect>();
      for (const { spec, books, trades, derivatives } of synthetic) {
        const inside = <T extends { ts: number }>(xs: T[]) => xs.filter((x) => x.ts >= from && x.ts < to);
        const ds = inside(derivatives);
        const latest = (k: 'funding_rate_8h' | 'usd_open_interest') => [...ds].reverse().find((d) => d[k] !== undefined)?.[k] ?? null;
        m.set(`${exchange(spec.ex)} ${pairName(spec)}`, {
          samples: inside(books).length,
          volume: inside(trades).reduce((s, t) => s + t.price * t.amount, 0),
          funding: latest('funding_rate_8h'),
          oi: latest('usd_open_interest'),
        });
      }
      m.set(`${exchange('coinbase')} ${BTC_PAIR}`, { samples: recording.filter((b) => b.ts >= from && b.ts < to).length, volume: 0, funding: null, oi: null });
      return m;
    };
    const windows: [number, number][] = [
      [Date.UTC(2026, 5, 24), Date.UTC(2026, 5, 26)],
      [H(24, 8, 35), H(25, 10, 47)],
      [Date.UTC(2026, 5, 24), Date.UTC(2026, 5, 25)],
    ];
    const wants = windows.map(([from, to]) => ({ from, to, want: expectAt(from, to) }));
    const near = (a: unknown, b: number) => typeof a === 'number' && Math.abs(a - b) <= Math.abs(b) * 1e-9;
    let missing = '';
    const check = async () => {
      for (const { from, to, want } of wants) {
        const r = await call('POST', SUMMARY, { token, json: { assets: ALL, bps: [1], ...span(from, to) } });
        missing = `${iso(from)}-${iso(to)}: ${r.status} ${r.text.slice(0, 300)}`;
        if (r.status !== 200 || !Array.isArray(r.body)) return false;
        const got = new Map((r.body as { exchange: { slug: string }; pair: string }[]).map((x) => [`${x.exchange.slug} ${x.pair}`, x as unknown as Record<string, unknown>]));
        for (const [k, e] of want) {
          const row = got.get(k);
          if (e.samples === 0 && e.volume === 0) continue;
          const seen = row && { samples: row.tick_bps_samples, volume: row.volume, funding: row.funding_rate_8h, oi: row.usd_open_interest };
          missing = `${iso(from)}-${iso(to)} ${normalizeNames(k)}: ${JSON.stringify(seen)}, expected ${JSON.stringify(e)}`;
          if (!row || row.tick_bps_samples !== e.samples || !(e.volume === 0 ? row.volume === 0 : near(row.volume, e.volume))) return false;
          if (row.funding_rate_8h !== e.funding || row.usd_open_interest !== e.oi) return false;
        }
      }
      return true;
    };
    await waitFor('every snapshot, trade and perpetual value in the rollups', check, 240_000).catch(async (e: unknown) => {
      const seen = missing;
      const limit = service.deps.windowCache.maxBytes;
      service.deps.windowCache.maxBytes = 0;
      const direct = await check().finally(() => (service.deps.windowCache.maxBytes = limit));
      throw new Error(`${(e as Error).message}; last seen: ${seen}; uncached: ${direct ? 'all there' : missing}`);
    });
    // The same requests in the same order from here: answers kept between requests start empty.
    service.deps.uptimeCache.clear();
    service.deps.windowCache.clear();
    api = await startApi({ ...service.deps, now: () => FIXED }, '127.0.0.1', 0);
    if (DUMP) fs.mkdirSync(DUMP, { recursive: true });
  });

  after(async () => {
    await api?.close();
    if (RECORD && Object.keys(recorded).length === all.length) {
      const file: AnswersFile = {
        about: 'Answers of the market endpoints, written by test/api/market-answers.test.ts with RECORD_MARKET_ANSWERS=1; names normalized (qtagtag/QTAGTAG).',
        clock: iso(FIXED),
        data_sha256: dataSha256,
        cases: recorded,
      };
      fs.mkdirSync(path.dirname(ANSWERS), { recursive: true });
      fs.writeFileSync(ANSWERS, `${JSON.stringify(file, null, 1)}\n`);
    }
  });

  // Recording writes the file instead (after all): there is nothing to hold it against.
  if (!RECORD) it('has a recording of every case (RECORD_MARKET_ANSWERS=1 writes it)', () => {
    expect(expected, `no recording at ${ANSWERS}: run with RECORD_MARKET_ANSWERS=1`).to.not.equal(undefined);
    expect(Object.keys(expected!.cases)).to.deep.equal(all.map((c) => c.name));
    expect(expected!.clock).to.equal(iso(FIXED));
    expect(dataSha256, 'the data sent differ from the recorded run\'s (generator or recording changed?)').to.equal(expected!.data_sha256);
  });

  for (const c of all) {
    it(c.name, async () => {
      const { url, init, shown } = requestLine(c);
      const r = await call(init.method, url, { token, baseUrl: api.url, ...(init.json === undefined ? {} : { json: init.json }) });
      const contentType = r.headers.get('content-type');
      if (c.path === REGIONAL && Array.isArray(r.body)) {
        // Bucketed regional rows: in time order, then by asset (the recording holds them so too).
        const order = (r.body as { timestamp: string; asset: string }[]).map((row) => `${String(Date.parse(row.timestamp)).padStart(15, '0')} ${row.asset}`);
        expect(order, `${c.name}: rows by bucket, then asset`).to.deep.equal([...order].sort());
      }
      let body = normalizeNames(r.text);
      if (c.round) body = roundNumbers(body, contentType);
      const answer: Answer = {
        request: shown,
        status: r.status,
        content_type: contentType,
        ...(r.headers.get('content-disposition') ? { content_disposition: r.headers.get('content-disposition')! } : {}),
        normalized: c.round ? `names, numbers to ${DIGITS} digits` : 'names',
        bytes: Buffer.byteLength(body),
        sha256: crypto.createHash('sha256').update(body).digest('hex'),
        ...(Buffer.byteLength(body) < INLINE_BYTES ? { body } : {}),
      };
      if (DUMP) fs.writeFileSync(path.join(DUMP, `${fileSafe(c.name)}.body`), body);
      if (RECORD) {
        recorded[c.name] = answer;
        return;
      }
      const want = expected?.cases[c.name];
      expect(want, `${c.name}: not in the recording (RECORD_MARKET_ANSWERS=1 writes it)`).to.not.equal(undefined);
      const { body: _wantBody, ...wantMeta } = want!;
      const { body: _gotBody, ...gotMeta } = answer;
      if (JSON.stringify(gotMeta) !== JSON.stringify(wantMeta)) {
        mismatchDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'market-answers-'));
        fs.writeFileSync(path.join(mismatchDir, `${fileSafe(c.name)}.actual`), body);
        if (want!.body !== undefined) fs.writeFileSync(path.join(mismatchDir, `${fileSafe(c.name)}.expected`), want!.body);
        fs.writeFileSync(path.join(mismatchDir, `${fileSafe(c.name)}.meta.json`), JSON.stringify({ expected: wantMeta, actual: gotMeta }, null, 1));
        expect.fail(`${c.name}: the answer differs from the recording (${shown}); actual body in ${mismatchDir}\nexpected ${JSON.stringify(wantMeta)}\nactual   ${JSON.stringify(gotMeta)}`);
      }
    });
  }
});
