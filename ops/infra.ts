// Brings up what the service needs on this machine: Redis, a Kafka broker and the schema
// registry. Each is
// reused when something already answers at its configured address, and started (as a
// child of this process, stopped with it) when nothing does.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { findConfluentApi } from '../lib/schema-registry.ts';
import { kafkaAnswers, startKafka } from './kafka.ts';
import { startSchemaRegistry } from './schema-registry.ts';

export interface Started {
  name: string;
  stop(): Promise<void>;
}

export async function redisAnswers(url: string): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host.startsWith('127.') || host === '[::1]' || host === '::1';
}

export async function ensureRedis(config: Pick<Config, 'redisUrl' | 'dataDir'>, log: Logger): Promise<Started | undefined> {
  if (await redisAnswers(config.redisUrl)) {
    log.info('Redis answers', { url: hostOf(config.redisUrl) });
    return undefined;
  }
  const url = new URL(config.redisUrl);
  if (!isLoopback(url.hostname)) throw new Error(`Redis at ${hostOf(config.redisUrl)} does not answer, and it is not on this machine to start`);
  const port = url.port || '6379';
  const dir = path.join(config.dataDir, 'redis');
  fs.mkdirSync(dir, { recursive: true });
  log.info('starting redis-server', { port });
  // Nothing in Redis needs to survive a restart: no snapshots, no append-only file.
  const child = spawn('redis-server', ['--port', port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  for (let i = 0; i < 50; i++) {
    if (await redisAnswers(config.redisUrl)) return { name: 'redis', stop: () => stopChild(child, exited) };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start');
}

export async function ensureKafka(config: Pick<Config, 'kafkaBrokers' | 'dataDir'>, log: Logger): Promise<Started | undefined> {
  const brokers = config.kafkaBrokers.join(',');
  if (await kafkaAnswers(brokers)) {
    log.info('Kafka answers', { brokers });
    return undefined;
  }
  const [host, portText] = splitHostPort(config.kafkaBrokers[0]!);
  if (config.kafkaBrokers.length > 1 || !isLoopback(host)) throw new Error(`Kafka at ${brokers} does not answer, and it is not on this machine to start`);
  const kafka = await startKafka({ dataDir: config.dataDir, port: Number(portText), log: (line) => log.info(line) });
  return { name: 'kafka', stop: () => kafka.stop() };
}

export async function ensureSchemaRegistry(config: Pick<Config, 'schemaRegistryUrl' | 'dataDir'>, log: Logger): Promise<Started | undefined> {
  const url = new URL(config.schemaRegistryUrl);
  const where = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  const api = await findConfluentApi(config.schemaRegistryUrl);
  if (api) {
    log.info('schema registry answers', { url: where });
    return undefined;
  }
  const bare = url.pathname.replace(/\/+$/, '') === '';
  if (!isLoopback(url.hostname) || url.protocol !== 'http:' || !bare) {
    throw new Error(`the schema registry at ${where} does not answer, and it is not one this machine starts (http://127.0.0.1:<port>)`);
  }
  const registry = await startSchemaRegistry({ dataDir: config.dataDir, port: Number(url.port || '80'), log: (line) => log.info(line) });
  return { name: 'schema registry', stop: () => registry.stop() };
}

function splitHostPort(hp: string): [string, string] {
  const i = hp.lastIndexOf(':');
  return [hp.slice(0, i), hp.slice(i + 1)];
}

function hostOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '6379'}`;
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000));
  if ((await Promise.race([exited, timeout])) === 'timeout') child.kill('SIGKILL');
}

/** Stops in reverse order of start. */
export async function stopAll(started: (Started | undefined)[], log: Logger): Promise<void> {
  for (const s of [...started].reverse()) {
    if (!s) continue;
    log.info(`stopping ${s.name}`);
    await s.stop().catch((e: unknown) => log.warn(`stopping ${s.name} failed`, { err: e as Error }));
  }
}
