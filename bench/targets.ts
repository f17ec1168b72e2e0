// npm run bench:targets — the target evaluator (processors/targets/evaluator.ts): one
// minute's evaluation of 10,000 and of 50,000 active targets on 300 pairs, against the
// bare ClickHouse time of the same reads (the targets with their states, and the window's
// book and trade aggregates) run alone on a connection of the benchmark's own.
//
// History is written straight into the minute tables (bench/market-history.ts), three
// hours of it; the targets are gb targets, one per pair and metric, a tenth of them limited
// to a session; every run evaluates the next minute, and its status changes go to
// targets.events through the service's publisher.
import { openClickHouse } from '../lib/clickhouse.ts';
import { createProducer, createKafka, ensureTopics, topicName } from '../lib/kafka.ts';
import { migrate } from '../lib/migrate.ts';
import { frameHeader, openSchemaRegistry } from '../lib/schema-registry.ts';
import { deleteSubjects, registerTopicSchemas } from '../schemas/registration.ts';
import { GB_METRICS } from '../domain/market/facts.ts';
import { UserRepository } from '../domain/accounts/users.ts';
import { loadFixture } from '../domain/reference/fixtures.ts';
import { ReferenceRepository } from '../domain/reference/repository.ts';
import { TARGET_SESSIONS, defaultDirection } from '../domain/targets/facts.ts';
import { TargetRepository, type TargetDefinition } from '../domain/targets/repository.ts';
import { EvaluationRepository } from '../domain/targets/evaluations.ts';
import { KafkaEventPublisher, TargetEvaluator } from '../processors/targets/evaluator.ts';
import { windowOf } from '../domain/targets/window.ts';
import { benchWorld, check, deleteTopicsAndGroups, flags, fmtInt, fmtMs, percentile, positiveInt, say, type BenchRun, type Figure, runBench } from './common.ts';
import { writeMinutes } from './market-history.ts';
import { RolledUp, RollupMarks } from '../domain/market/repositories/rollup-marks.ts';

const NAME = 'bench:targets';
const opt = flags(
  NAME,
  {
    pairs: { default: '300', help: 'pairs the targets are spread over' },
    targets: { default: '10000,50000', help: 'active targets per series, comma-separated' },
    runs: { default: '5', help: 'minutes evaluated per series (the first changes every status)' },
  },
  'one minute of the target evaluator for 10,000 and 50,000 targets, against the bare ClickHouse time of its reads',
);
const PAIRS = positiveInt('pairs', opt.pairs);
const SIZES = opt.targets.split(',').map((x) => positiveInt('targets', x.trim()));
const RUNS = positiveInt('runs', opt.runs);
const GOAL_10K_MS = 5_000;
const MINUTE = 60_000;

async function main(r: BenchRun): Promise<Figure[]> {
  const { config, log } = r;
  const ch = openClickHouse(config, 'bench-targets');
  const bare = openClickHouse(config, 'bench-bare');
  r.onCleanup(() => ch.close());
  r.onCleanup(() => bare.close());
  await migrate(ch, log.child('migrate'));
  const world = benchWorld({ pairs: PAIRS, exchangePrefix: 'tg' });
  await loadFixture({ ...world.fixture, users: [] }, { reference: new ReferenceRepository(ch), users: new UserRepository(ch) });

  const end = Math.floor(Date.now() / MINUTE) * 60 - 60; // epoch s
  say(NAME, `writing 3 hours of minute history for ${world.pairs.length} pairs...`);
  await writeMinutes(ch, world.pairs, end - 3 * 3600, end);

  const kafka = createKafka(config, 'mm-bench-targets', log.child('kafka'));
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, config);
  await admin.disconnect();
  const registry = await openSchemaRegistry(config, 'mm-bench-targets');
  const ids = await registerTopicSchemas(registry, config, log);
  r.onCleanup(() => deleteSubjects(registry, config));
  r.onCleanup(() => deleteTopicsAndGroups(kafka, config, []));
  const producer = createProducer(kafka);
  await producer.connect();
  r.onCleanup(() => producer.disconnect());
  const publisher = new KafkaEventPublisher(producer, topicName(config, 'targets.events'), frameHeader(ids.get('targets.events')!));
  let events = 0;

  const targets = new TargetRepository(ch);
  const f: Figure[] = [];
  let previous: number[] = [];
  let nextId = 1;
  let minute = end * 1000 - 30 * MINUTE;
  for (const n of SIZES) {
    // One target per pair and metric; every tenth limited to market hours.
    const create: (TargetDefinition & { id: number })[] = [];
    for (let i = 0; create.length < n; i++) {
      const p = world.pairs[i % world.pairs.length]!;
      const metric = GB_METRICS[Math.floor(i / world.pairs.length) % GB_METRICS.length]!;
      create.push({
        id: nextId++,
        type: 'gb',
        organization: 'bench-project',
        asset: p.asset,
        exchange: p.exchange,
        pair: p.pair,
        metric,
        threshold: 1,
        direction: defaultDirection(metric),
        active: true,
        telegram_notifications: false,
        scaling_mode: 'price',
        scaling_enabled: i % 20 === 0,
        scaling_source: 'asset_twap_24h',
        scaling_reference_price: p.price,
        market_hours: i % 10 === 0 ? TARGET_SESSIONS[i % TARGET_SESSIONS.length]! : null,
      });
    }
    say(NAME, `--- ${fmtInt(n)} targets: saving them in one batch...`);
    await targets.applyBatch({ deleteIds: previous, create, by: 0, at: Date.now() });
    previous = create.map((t) => t.id);
    const evaluator = new TargetEvaluator({
      ch,
      targets,
      reference: new ReferenceRepository(ch),
      events: { publish: async (list) => ((events += list.length), publisher.publish(list)) },
      log,
      now: Date.now,
      latenessMs: config.latenessMs,
      rolledUp: new RolledUp(new RollupMarks(ch), Date.now),
    });
    const times: number[] = [];
    const changes: number[] = [];
    const bareTimes: number[] = [];
    const evaluations = new EvaluationRepository(bare);
    const pairKeys = world.pairs.map((p) => ({ exchange: p.exchange, pair: p.pair }));
    for (let k = 0; k < RUNS; k++) {
      minute += MINUTE;
      const t0 = performance.now();
      const result = await evaluator.evaluateMinute(minute);
      times.push(performance.now() - t0);
      changes.push(result.changes);
      // The same reads alone: the targets, then each session's window of books and trades.
      const b0 = performance.now();
      await new TargetRepository(bare).all();
      for (const session of [null, ...TARGET_SESSIONS]) {
        const ranges = windowOf(session, minute);
        if (ranges.length === 0) continue;
        await Promise.all([evaluations.books(pairKeys, ranges), evaluations.trades(pairKeys, ranges)]);
      }
      bareTimes.push(performance.now() - b0);
      say(NAME, `  minute ${k + 1}/${RUNS}: ${fmtMs(times[k]!)} (${fmtInt(result.evaluated)} evaluated, ${fmtInt(result.changes)} changes); bare reads ${fmtMs(bareTimes[k]!)}`);
    }
    const p50 = percentile(times, 50);
    const p50bare = percentile(bareTimes, 50);
    f.push({
      figure: `${fmtInt(n)} targets, ${world.pairs.length} pairs: one minute's evaluation, p50 / max of ${RUNS} (first: every status changes)`,
      value: `${fmtMs(p50)} / ${fmtMs(Math.max(...times))}`,
      goal: n <= 10_000 ? `< ${GOAL_10K_MS / 1000} s` : '—',
      result: n <= 10_000 ? check(Math.max(...times) < GOAL_10K_MS) : 'info',
    });
    f.push({ figure: `${fmtInt(n)} targets: bare ClickHouse time of the same reads, p50; ratio`, value: `${fmtMs(p50bare)}; ${(p50 / p50bare).toFixed(1)}x`, goal: '—', result: 'info' });
    f.push({ figure: `${fmtInt(n)} targets: status changes per minute (first, then p50)`, value: `${fmtInt(changes[0]!)}, ${fmtInt(percentile(changes.slice(1), 50))}`, goal: '—', result: 'info' });
  }
  say(NAME, `${fmtInt(events)} events produced to targets.events`);
  return f;
}

// Last, so every constant above is initialised before the run starts.
await runBench(NAME, main);
