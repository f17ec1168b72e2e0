// A service of its own in a child process (ops/cli/start.ts), for tests that kill it:
// its data folder, topic prefix and port; the shared Kafka, Redis and registry of the run.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { testStack } from './stack.ts';

export interface Child {
  proc: ChildProcess;
  url: string;
  dataDir: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  log: string[];
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

/** Starts a service; with a crash point it may die before it even serves (url ''). */
export async function startChild(dataDir: string, prefix: string, faults = ''): Promise<Child> {
  const port = await freePort();
  const log: string[] = [];
  const proc = spawn(process.execPath, ['--import', 'tsx', 'ops/cli/start.ts'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      TOPIC_PREFIX: prefix,
      PORT: String(port),
      HOST: '127.0.0.1',
      PROCESSOR_FLUSH_MS: '200',
      MM_FAULTS: faults,
      LOG_LEVEL: 'info',
      KAFKA_BROKERS: testStack().config.kafkaBrokers.join(','),
      REDIS_URL: testStack().config.redisUrl,
      SCHEMA_REGISTRY_URL: testStack().config.schemaRegistryUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string | undefined>((resolve) => {
    const onData = (b: Buffer) => {
      const text = b.toString();
      log.push(text);
      const m = /API listening url=(\S+)/.exec(text);
      if (m) resolve(m[1]);
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    void exited.then(() => resolve(undefined));
  });
  if (!url && !(faults && (await exited).signal === 'SIGKILL')) throw new Error(`service did not start:\n${log.join('')}`);
  return { proc, url: url ?? '', dataDir, exited, log };
}

export async function stopChild(c: Child): Promise<void> {
  if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGTERM');
  await c.exited;
}

/** The local operator's secret of a child service, for loading fixtures. */
export const opsToken = (c: Child) => fs.readFileSync(path.join(c.dataDir, 'run', 'ops-token'), 'utf8').trim();
