// `npm test`: the whole suite as two mocha runs at once, against one Redis, one Kafka broker
// and one schema registry brought up here first (reused when they already answer). The kill
// tests, which mostly wait on services they start, kill and restart, run beside the rest
// (the RFQ award kill after it);
// each run starts its own test service (test/support/stack.ts) with its own topic prefix,
// Redis prefix and ClickHouse folder, so the two never meet. The main run reports as it
// goes; the kill tests' report follows it. With arguments (`npm test -- test/api/x.test.ts`),
// or with TEST_INFRA=containers, one mocha run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { ensureKafka, ensureRedis, ensureSchemaRegistry, stopAll, type Started } from './infra.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MOCHA = path.join(root, 'node_modules/mocha/bin/mocha.js');
/** Files that kill and restart services of their own: the longest, and mostly waiting. */
const KILL_TESTS = ['test/processors/exactly-once.test.ts', 'test/api/rfq-award-kill.test.ts'];
/** Of those, run after the rest: beside it, on two busy cores, its restarted services missed its ten minutes. */
const AFTER_REST = ['test/api/rfq-award-kill.test.ts'];
const BESIDE_REST = KILL_TESTS.filter((f) => !AFTER_REST.includes(f));

interface Run {
  name: string;
  done: Promise<number>;
}

/** A mocha run; its output goes to ours at once (`live`) or is kept until `release()`. */
function mocha(name: string, args: string[], live: boolean): Run & { release(): void } {
  const child = spawn(process.execPath, ['--import', 'tsx', MOCHA, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  let held: Buffer[] | undefined = live ? undefined : [];
  const out = (stream: NodeJS.WriteStream) => (b: Buffer) => (held ? held.push(b) : stream.write(b));
  child.stdout.on('data', out(process.stdout));
  child.stderr.on('data', out(process.stderr));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
  return {
    name,
    done: new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))),
    release() {
      if (!held) return;
      for (const b of held) process.stdout.write(b);
      held = undefined;
    },
  };
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  // Named files, or containers (each run would start its own): one run.
  if (args.length > 0 || process.env.TEST_INFRA === 'containers') return mocha('the tests', args, true).done;

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-test-infra-'));
  const log = createLogger('info', 'test');
  const config = loadConfig({ ...process.env, DATA_DIR: tmp });
  const started: (Started | undefined)[] = [];
  try {
    started.push(await ensureRedis(config, log));
    const infra = await Promise.allSettled([ensureKafka({ ...config, dataDir: path.join(tmp, 'kafka-home') }, log), ensureSchemaRegistry({ ...config, dataDir: path.join(tmp, 'schema-registry-home') }, log)]);
    for (const s of infra) if (s.status === 'fulfilled') started.push(s.value);
    for (const s of infra) if (s.status === 'rejected') throw s.reason;

    process.stderr.write(`[test] ${BESIDE_REST.join(', ')} run beside the other tests, ${AFTER_REST.join(', ')} after them; their reports follow the others'\n`);
    const kills = mocha('kill tests', BESIDE_REST, false);
    const rest = mocha('the other tests', KILL_TESTS.flatMap((f) => ['--ignore', f]), true);
    const restCode = await rest.done;
    process.stdout.write('\n[test] the kill tests:\n');
    kills.release();
    const killCode = await kills.done;
    const after = mocha('kill tests after the rest', AFTER_REST, true);
    const afterCode = await after.done;
    const runs = [
      [rest, restCode],
      [kills, killCode],
      [after, afterCode],
    ] as const;
    for (const [run, code] of runs) process.stderr.write(`[test] ${run.name}: ${code === 0 ? 'passed' : `failed (exit ${code})`}\n`);
    return runs.find(([, code]) => code !== 0)?.[1] ?? 0;
  } finally {
    await stopAll(started, log);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`[test] ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
