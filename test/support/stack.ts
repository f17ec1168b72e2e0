// The real parts the integration tests run against, started once per run: Redis, Kafka and
// the schema registry on this machine (reused when they already answer, started
// otherwise), or containers when TEST_INFRA=containers; embedded ClickHouse in a fresh folder (or CLICKHOUSE_URL); and
// the service itself on a random port. Tests keep apart by unique names, not by wiping.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kafka } from 'kafkajs';
import { loadConfig, type Config } from '../../lib/config.ts';
import { createKafka } from '../../lib/kafka.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
import { ensureKafka, ensureRedis, ensureSchemaRegistry, stopAll, type Started } from '../../ops/infra.ts';
import { DEFAULT_LIMITS } from '../../api/deps.ts';
import { startService, type Service } from '../../ops/service.ts';
import { startContainers } from './containers.ts';

export interface TestStack {
  config: Config;
  service: Service;
  url: string;
  kafka: Kafka;
  log: Logger;
}

let stack: TestStack | undefined;
let started: (Started | undefined)[] = [];
let tmpDir: string | undefined;

export function testStack(): TestStack {
  if (!stack) throw new Error('the test stack is not running (test/support/hooks.ts starts it)');
  return stack;
}

export async function startTestStack(): Promise<void> {
  const runId = `t${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-test-'));
  // Our producers choose their partitioner; the warning is about kafkajs defaults.
  process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
  const log = createLogger(process.env.TEST_LOG_LEVEL === 'debug' ? 'debug' : 'warn', 'test');
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: tmpDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TOPIC_PREFIX: `${runId}.`,
    // Tests ask the same window again to see a write or a cache at work: each request is
    // computed (test/api/market-answers-shared.test.ts turns the sharing on for itself).
    ANSWER_REUSE_MS: process.env.ANSWER_REUSE_MS ?? '0',
  };
  if (process.env.TEST_INFRA === 'containers') {
    const c = await startContainers(log);
    started.push(c);
    Object.assign(env, c.env);
  }
  const config = loadConfig(env);
  process.stderr.write(`[test] data in ${tmpDir}; topics and subjects prefixed ${config.topicPrefix}; Kafka ${config.kafkaBrokers.join(',')}; schema registry ${config.schemaRegistryUrl}\n`);
  started.push(await ensureRedis(config, log));
  // A broker and a registry the tests start get folders of their own, so they never meet a
  // demo's data. Both JVMs start at once.
  const [kafka, registry] = await Promise.allSettled([
    ensureKafka({ ...config, dataDir: path.join(tmpDir, 'kafka-home') }, log),
    ensureSchemaRegistry({ ...config, dataDir: path.join(tmpDir, 'schema-registry-home') }, log),
  ]);
  for (const s of [kafka, registry]) if (s.status === 'fulfilled') started.push(s.value);
  for (const s of [kafka, registry]) if (s.status === 'rejected') throw s.reason;
  // Every test signs in from 127.0.0.1: per-address limits would trip across tests. The
  // throttle tests run their own API with small limits.
  const limits = Object.fromEntries(
    Object.entries(DEFAULT_LIMITS).map(([k, v]) => [k, k.endsWith('PerAddress') ? { ...v, limit: 1_000_000 } : v]),
  ) as typeof DEFAULT_LIMITS;
  // The evaluator is driven by its tests with a clock of their own (test/processors/target-evaluator.test.ts).
  const service = await startService(config, log, { redisPrefix: `mmtest:${runId}:`, flushMs: 200, limits, evaluateTargets: false });
  stack = { config, service, url: service.api.url, kafka: createKafka(config, 'mm-test', log), log };
}

export async function stopTestStack(): Promise<void> {
  const log = stack?.log ?? createLogger('warn', 'test');
  await stack?.service.stop().catch((e: unknown) => log.warn('service stop failed', { err: e as Error }));
  stack = undefined;
  await stopAll(started, log);
  started = [];
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
}
