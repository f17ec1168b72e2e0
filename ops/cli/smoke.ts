// A short check that the service runs on the Node that runs this file: it starts (Redis,
// Kafka and the schema registry reused when they answer, started otherwise; embedded
// ClickHouse in a folder of its own), loads a fixture, signs a user in (argon2), and stops.
// ops/node-versions.mjs runs it on each supported Node line.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../lib/config.ts';
import { createLogger } from '../../lib/log.ts';
import { ensureKafka, ensureRedis, ensureSchemaRegistry, stopAll, type Started } from '../infra.ts';
import { startService, type Service } from '../service.ts';
import { exitWhenIdle } from './run.ts';

const tag = crypto.randomBytes(4).toString('hex');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-smoke-'));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', TOPIC_PREFIX: `smoke-${tag}.` });
const log = createLogger('warn', 'smoke');
const say = (line: string) => process.stdout.write(`[smoke ${process.version}] ${line}\n`);
const started: (Started | undefined)[] = [];
let service: Service | undefined;
let code = 0;
try {
  started.push(await ensureRedis(config, log));
  started.push(await ensureKafka({ ...config, dataDir: path.join(dataDir, 'kafka-home') }, log));
  started.push(await ensureSchemaRegistry({ ...config, dataDir: path.join(dataDir, 'schema-registry-home') }, log));
  service = await startService(config, log, { redisPrefix: `mmsmoke:${tag}:`, evaluateTargets: false });
  say(`service started at ${service.api.url}`);
  const password = crypto.randomBytes(12).toString('base64url');
  const email = `smoke-${tag}@test.example`;
  await service.deps.loadFixture({
    exchanges: [{ slug: `ex-${tag}`, name: `Exchange ${tag}`, region: 'asia' }],
    organizations: [{ slug: `org-${tag}`, name: `Project ${tag}`, kind: 'project' }],
    assets: [{ symbol: `S${tag.toUpperCase()}`, name: 'Smoke', owner: `org-${tag}` }],
    pairs: [{ exchange: `ex-${tag}`, pair: `S${tag.toUpperCase()}/USDT`, asset: `S${tag.toUpperCase()}`, market_type: 'spot' }],
    users: [{ email, username: `smoke-${tag}`, password, organizations: [`org-${tag}`] }],
  });
  say('fixture loaded');
  const res = await fetch(`${service.api.url}/v1/login/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password }) });
  const body = (await res.json()) as { token?: unknown };
  if (res.status !== 200 || typeof body.token !== 'string') throw new Error(`sign-in answered ${res.status}: ${JSON.stringify(body)}`);
  say('signed in');
} catch (e) {
  code = 1;
  say(`FAILED: ${(e as Error).stack ?? String(e)}`);
} finally {
  try {
    await service?.stop();
    await stopAll(started, log);
    if (code === 0) say('stopped');
  } catch (e) {
    code = 1;
    say(`FAILED to stop: ${(e as Error).message}`);
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
await exitWhenIdle(log, code, 2_000);
