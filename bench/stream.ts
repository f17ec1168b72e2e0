// npm run bench:stream — the event stream (api/stream/): 1,000 subscribers on one API
// process, each with filters of its own (a staff user or a project member; one to ten
// assets, or all of them; one to four depth levels), while the service ingests a live feed
// like bench:ingest's freshness run (every pair sends a book once a second, current times).
// Measured:
//   - memory per idle subscriber: the API process's heap after a full collection, with the
//     subscribers connected and nothing sent, against before they connected;
//   - from a minute's write to each subscriber's receipt of its `minute` event, p50 / p95 /
//     p99 / max over every receipt. The write is the minute row's `closed_at`, which the
//     processor stamps as it starts the insert, so the insert itself is counted; receipts
//     are also given from the event's `written_at`, the insert's acknowledgement.
// The subscribers are read in a worker thread of the benchmark's process, so reading them
// does not take the API's event loop; the clocks are the same machine's. The reader finds
// the fields it needs by their place rather than parsing each event, so its own work
// delays the receipts it times as little as it can.
import v8 from 'node:v8';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { createKafka, createProducer, topicName } from '../lib/kafka.ts';
import { deleteSubjects } from '../schemas/registration.ts';
import { startService } from '../ops/service.ts';
import { ORDERBOOK_GROUP } from '../processors/orderbook/processor.ts';
import { TRADES_GROUP } from '../processors/trades/processor.ts';
import { DERIVATIVES_GROUP } from '../processors/derivatives/processor.ts';
import { LEVELS_BPS } from '../domain/market/facts.ts';
import { BookGenerator, benchWorld, check, deleteTopicsAndGroups, flags, fmtInt, fmtMs, percentile, positiveInt, say, sleep, until, type BenchRun, type Figure, dropRedisKeys, runBench } from './common.ts';

const NAME = 'bench:stream';
const opt = flags(
  NAME,
  {
    subscribers: { default: '1000', help: 'open streams on the one API process' },
    pairs: { default: '300', help: 'pairs of the live feed, each sending a book once a second' },
    minutes: { default: '2', help: 'minutes of receipts measured' },
    lateness: { default: '5', help: 'LATENESS_SECONDS of the processors' },
  },
  "a minute's write to each of 1,000 subscribers' receipt, and memory per idle subscriber, while ingesting",
);
const SUBSCRIBERS = positiveInt('subscribers', opt.subscribers);
const PAIRS = positiveInt('pairs', opt.pairs);
const MINUTES = positiveInt('minutes', opt.minutes);
const LATENESS_S = positiveInt('lateness', opt.lateness);
const GOAL_P99_MS = 1_000;

// The subscribers' reader: plain JavaScript, evaluated in a worker thread.
const CLIENTS = `
const { parentPort } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const latencies = [];
// Receipt times by minute: the data's fields up to \`source\` (exchange, pair, asset, timestamp).
let receipts = new Map();
let open = 0, ended = 0, resets = 0, events = 0;
parentPort.on('message', (m) => {
  if (m.kind === 'open') for (const s of m.streams) connect(s);
  if (m.kind === 'report') {
    parentPort.postMessage({ kind: 'report', open, ended, resets, events, latencies: latencies.splice(0), receipts: [...receipts] });
    receipts = new Map();
  }
});
function connect(s) {
  const req = http.get(s.url, { agent, headers: { Authorization: s.authorization, Accept: 'text/event-stream' } }, (res) => {
    if (res.statusCode !== 200) { ended++; res.resume(); return; }
    open++;
    res.setEncoding('utf8');
    let buf = '';
    res.on('data', (chunk) => {
      const at = Date.now();
      buf += chunk;
      let start = 0;
      for (let cut = buf.indexOf('\\n\\n'); cut >= 0; cut = buf.indexOf('\\n\\n', start)) {
        const block = buf.slice(start, cut);
        start = cut + 2;
        if (block.startsWith('event: reset')) resets++;
        if (!block.startsWith('event: minute')) continue;
        events++;
        const i = block.indexOf('data: ');
        const key = block.slice(i + 6, block.indexOf(',"source"', i));
        let list = receipts.get(key);
        if (!list) receipts.set(key, (list = []));
        list.push(at);
        const w = block.lastIndexOf('"written_at":"');
        latencies.push(at - Date.parse(block.slice(w + 14, w + 38)));
      }
      buf = buf.slice(start);
    });
    res.on('close', () => { open--; ended++; });
  });
  req.on('error', () => { ended++; });
}
parentPort.postMessage({ kind: 'ready' });
`;

interface Report {
  open: number;
  ended: number;
  resets: number;
  events: number;
  /** From each receipt's `written_at`. */
  latencies: number[];
  receipts: [string, number[]][];
}

function fullGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

async function heapAfterGc(gc: () => void): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(100);
  }
  return process.memoryUsage().heapUsed;
}

async function main(r: BenchRun): Promise<Figure[]> {
  const { config, log, runId } = r;
  const redisPrefix = `mmbench:${runId}:`;
  const kafka = createKafka(config, 'mm-bench-stream', log.child('kafka'));
  r.onCleanup(() => deleteTopicsAndGroups(kafka, config, [ORDERBOOK_GROUP, TRADES_GROUP, DERIVATIVES_GROUP].map((g) => config.topicPrefix + g)));
  r.onCleanup(() => dropRedisKeys(config.redisUrl, redisPrefix));
  const gc = fullGc();

  say(NAME, `starting the service (API + processors, lateness ${LATENESS_S} s)...`);
  const service = await startService(config, log, { redisPrefix, evaluateTargets: false });
  r.onCleanup(() => deleteSubjects(service.registry, config));
  r.onCleanup(() => service.stop());
  const world = benchWorld({ pairs: PAIRS, exchangePrefix: 'streamx' });
  const member = { email: 'bench-member@bench.example', username: 'bench-member', password: 'bench-member-password', is_staff: false, organizations: ['bench-project'] };
  await service.deps.loadFixture({ ...world.fixture, users: [...(world.fixture.users ?? []), member] });
  const tokenOf = async (email: string) => {
    const u = await service.deps.users.byEmail(email);
    return (await service.deps.tokens.issue(u!.id, false)).token;
  };
  const tokens = [await tokenOf(world.staff.email), await tokenOf(member.email)];
  const assets = [...new Set(world.pairs.map((p) => p.asset))];

  // Each subscriber its own filters, drawn from a fixed seed.
  let seed = 17;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const pick = <T>(xs: readonly T[], n: number) => [...new Set(Array.from({ length: n }, () => xs[Math.floor(rnd() * xs.length)]!))];
  const streams = Array.from({ length: SUBSCRIBERS }, (_, i) => {
    const q = new URLSearchParams({ events: 'minute', bps: pick(LEVELS_BPS, 1 + Math.floor(rnd() * 4)).join(',') });
    if (i % 10 !== 0) q.set('assets', pick(assets, 1 + Math.floor(rnd() * 10)).join(','));
    return { url: `${service.api.url}/v2/stream/?${q}`, authorization: `Token ${tokens[i % 2]}` };
  });

  const worker = new Worker(CLIENTS, { eval: true });
  r.onCleanup(async () => {
    await worker.terminate();
  });
  const inbox: Report[] = [];
  await new Promise<void>((resolve) => worker.once('message', () => resolve()));
  worker.on('message', (m: { kind: string } & Report) => void (m.kind === 'report' && inbox.push(m)));
  const report = async (): Promise<Report> => {
    const n = inbox.length;
    worker.postMessage({ kind: 'report' });
    await until(async () => inbox.length > n, 10_000, 20);
    return inbox.at(-1)!;
  };

  const before = await heapAfterGc(gc);
  const rssBefore = process.memoryUsage().rss;
  worker.postMessage({ kind: 'open', streams });
  const opened = await until(async () => service.deps.stream!.stats().subscribers >= SUBSCRIBERS, 120_000, 200);
  if (!opened) throw new Error(`only ${service.deps.stream!.stats().subscribers} of ${SUBSCRIBERS} streams opened`);
  await sleep(2_000);
  const after = await heapAfterGc(gc);
  const rssAfter = process.memoryUsage().rss;
  say(NAME, `${fmtInt(SUBSCRIBERS)} streams open; heap ${fmtInt((after - before) / 1024)} KiB more, RSS ${fmtInt((rssAfter - rssBefore) / 1024)} KiB more`);

  // The feed, as bench:ingest's freshness run: every pair once a second, current times.
  const producer = createProducer(kafka);
  await producer.connect();
  r.onCleanup(() => producer.disconnect());
  const books = new BookGenerator(world.pairs, 20);
  const topic = topicName(config, 'md.orderbook');
  let feeding = true;
  const feed = (async () => {
    while (feeding) {
      const t0 = Date.now();
      await producer.send({ topic, acks: -1, messages: world.pairs.map((p, i) => ({ key: `${p.exchange}:${p.pair}`, value: JSON.stringify(books.book(i, Date.now())) })) });
      await sleep(Math.max(0, 1_000 - (Date.now() - t0)));
    }
  })();
  r.onCleanup(async () => {
    feeding = false;
    await feed.catch(() => undefined);
  });
  // The first whole minute of the feed, then MINUTES of them, each written after its lateness.
  const firstMinute = Math.ceil(Date.now() / 60_000) * 60_000;
  const done = firstMinute + MINUTES * 60_000 + LATENESS_S * 1000 + 15_000;
  say(NAME, `feeding ${fmtInt(PAIRS)} pairs once a second; measuring the minutes from ${new Date(firstMinute).toISOString()} until ~${new Date(done).toISOString().slice(11, 19)}...`);
  await report(); // drops whatever came before (nothing should)
  const samples: number[] = [];
  const receipts = new Map<string, number[]>();
  const keep = (rep: Report) => {
    samples.push(...rep.latencies);
    for (const [k, ats] of rep.receipts) receipts.set(k, [...(receipts.get(k) ?? []), ...ats]);
  };
  let events = 0;
  while (Date.now() < done) {
    await sleep(5_000);
    const rep = await report();
    keep(rep);
    events += rep.latencies.length;
    say(NAME, `  ${fmtInt(rep.open)} open, ${fmtInt(rep.ended)} ended, ${fmtInt(rep.resets)} resets; ${fmtInt(events)} receipts so far`);
  }
  feeding = false;
  await feed;
  const last = await report();
  keep(last);

  // Each receipt against its minute row's write.
  const rows = await service.deps.ch.query<{ exchange: string; pair: string; minute: number; written: number }>(
    `SELECT exchange, pair, toUnixTimestamp(minute) AS minute, toUnixTimestamp64Milli(min(closed_at)) AS written
     FROM book_minutes WHERE minute >= toDateTime({from:UInt32}, 'UTC') GROUP BY exchange, pair, minute`,
    { from: Math.floor(firstMinute / 1000) - 60 },
  );
  const writes = new Map(rows.map((w) => [`${w.exchange}\u0000${w.pair}\u0000${Number(w.minute) * 1000}`, Number(w.written)]));
  const fromWrite: number[] = [];
  let unmatched = 0;
  for (const [k, ats] of receipts) {
    const d = JSON.parse(`${k}}`) as { exchange: string; pair: string; timestamp: string };
    const written = writes.get(`${d.exchange}\u0000${d.pair}\u0000${Date.parse(d.timestamp)}`);
    if (written === undefined) unmatched += ats.length;
    else for (const at of ats) fromWrite.push(at - written);
  }

  const perSub = (after - before) / SUBSCRIBERS;
  const pcts = (xs: number[]) => `${fmtMs(percentile(xs, 50))} / ${fmtMs(percentile(xs, 95))} / ${fmtMs(percentile(xs, 99))} / ${fmtMs(Math.max(...xs))}`;
  return [
    {
      figure: `${fmtInt(SUBSCRIBERS)} subscribers, ${fmtInt(PAIRS)} pairs: a minute's write (its row's \`closed_at\`) to each subscriber's receipt, p50 / p95 / p99 / max of ${fmtInt(fromWrite.length)} receipts`,
      value: pcts(fromWrite),
      goal: `p99 < ${GOAL_P99_MS / 1000} s`,
      result: fromWrite.length > 0 && unmatched === 0 ? check(percentile(fromWrite, 99) < GOAL_P99_MS) : 'MISS',
    },
    { figure: "the same from the event's `written_at` (the insert acknowledged)", value: pcts(samples), goal: '—', result: 'info' },
    { figure: 'receipts of a minute not found written', value: fmtInt(unmatched), goal: '0', result: check(unmatched === 0) },
    { figure: 'memory per idle subscriber: API heap after a full collection', value: `${fmtInt(perSub / 1024)} KiB (${fmtInt(perSub)} bytes)`, goal: '—', result: 'info' },
    { figure: 'memory per idle subscriber: the process RSS (heap, sockets\' buffers, the reader thread)', value: `${fmtInt((rssAfter - rssBefore) / SUBSCRIBERS / 1024)} KiB`, goal: '—', result: 'info' },
    { figure: 'streams ended or reset during the run', value: `${fmtInt(last.ended)} ended, ${fmtInt(last.resets)} resets`, goal: '0', result: check(last.ended === 0 && last.resets === 0) },
  ];
}

// Last, so every constant above is initialised before the run starts.
await runBench(NAME, main, { env: { LATENESS_SECONDS: String(LATENESS_S) } });
