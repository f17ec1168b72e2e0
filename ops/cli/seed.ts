// npm run seed -- <fixture.json>: hands a fixture to the running service, which validates
// and loads it (with embedded ClickHouse only that process may open the data folder).
// Authenticated by the operator secret the service wrote to DATA_DIR, or by a staff token
// in MM_TOKEN. Prints what was loaded, or every broken entry (and loads nothing).
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { opsTokenPath } from '../service.ts';
import { boot, fail } from './run.ts';

const { config, log } = boot('seed');
const { values, positionals } = parseArgs({ allowPositionals: true, options: { url: { type: 'string' } } });
const file = positionals[0];
if (!file) fail(log, new Error('usage: npm run seed -- <fixture.json> [--url http://127.0.0.1:8080]'));

let body: string;
try {
  body = fs.readFileSync(file, 'utf8');
  JSON.parse(body);
} catch (e) {
  fail(log, new Error(`${file}: ${(e as Error).message}`));
}

const url = values.url ?? `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`;
let authorization: string;
if (process.env.MM_TOKEN) {
  authorization = `Token ${process.env.MM_TOKEN}`;
} else {
  try {
    authorization = `Ops-Token ${fs.readFileSync(opsTokenPath(config), 'utf8').trim()}`;
  } catch {
    fail(log, new Error(`no operator secret at ${opsTokenPath(config)}: is the service running (npm run demo / npm start) with this DATA_DIR? Or set MM_TOKEN to a staff token.`));
  }
}

let res: Response;
try {
  res = await fetch(`${url}/v1/admin/fixtures/`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: authorization }, body });
} catch (e) {
  fail(log, new Error(`cannot reach the service at ${url}: ${(e as Error).message}`));
}
const answer = (await res.json().catch(() => ({}))) as { loaded?: unknown; fixture?: string[]; detail?: string };
if (res.ok) {
  log.info(`loaded ${file}`, answer.loaded as Record<string, unknown>);
} else if (answer.fixture) {
  process.stderr.write(`${file} was rejected; nothing was loaded:\n${answer.fixture.map((p) => `  - ${p}`).join('\n')}\n`);
  process.exit(1);
} else {
  fail(log, new Error(`the service answered ${res.status}: ${JSON.stringify(answer)}`));
}
