// Small helpers for tests that drive the running service over HTTP.
import crypto from 'node:crypto';
import type { FixtureFile } from '../../schemas/index.ts';
import { Contract } from '../../api/http/contract.ts';
import { testStack } from './stack.ts';

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

// Tests read whatever JSON the API answered; `any` keeps assertions short.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function call<T = any>(
  method: string,
  path: string,
  opts: { token?: string; authorization?: string; json?: unknown; form?: Record<string, string>; baseUrl?: string } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.Authorization = `Token ${opts.token}`;
  if (opts.authorization) headers.Authorization = opts.authorization;
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(opts.form).toString();
  }
  const res = await fetch(`${opts.baseUrl ?? testStack().url}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // HTML or empty
  }
  holdToContract(method, path, res, parsed);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/**
 * Every answer a test reads through `call` is held to api/openapi.yaml: an answer of a
 * documented operation whose status or body the document does not describe fails the test.
 */
export function holdToContract(method: string, path: string, res: Response, body: unknown): void {
  const op = contract.operationOf(method, path.split('?')[0]!);
  if (!op) return;
  const type = res.headers.get('content-type') ?? '';
  const checked = type.startsWith('application/json') ? body : res.status === 204 ? undefined : body;
  const errors = contract.responseErrors(op.id, res.status, type || 'application/json', checked);
  if (errors.length > 0) throw new Error(`${method} ${path} -> ${res.status}: the answer breaks api/openapi.yaml (${op.id}): ${errors.slice(0, 5).join('; ')}`);
}

const contract = new Contract();

export const uniq = (prefix: string) => `${prefix}${crypto.randomBytes(4).toString('hex')}`;
export const UPPER = (s: string) => s.toUpperCase().replace(/[^A-Z0-9]/g, '');

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A small world of its own for one test file: an exchange, two organizations (a project
 * and a market maker), assets, pairs, and users of each role, all with unique names.
 */
export function world(password = 'correct-horse-battery') {
  const tag = crypto.randomBytes(3).toString('hex');
  const ex = `ex-${tag}`;
  const ex2 = `ex2-${tag}`;
  const project = `proj-${tag}`;
  const mm = `mm-${tag}`;
  const asset = `A${tag.toUpperCase()}`;
  const other = `B${tag.toUpperCase()}`;
  const users = {
    owner: { email: `owner-${tag}@test.example`, username: `owner-${tag}`, password, organizations: [project] },
    maker: { email: `maker-${tag}@test.example`, username: `maker-${tag}`, password, organizations: [mm] },
    staff: { email: `staff-${tag}@test.example`, username: `staff-${tag}`, password, is_staff: true, organizations: [] },
    loner: { email: `loner-${tag}@test.example`, username: `loner-${tag}`, password, organizations: [] },
  };
  const fixture: FixtureFile = {
    exchanges: [
      { slug: ex, name: `Exchange ${tag}`, icon_url: 'https://example.org/x.png', region: 'asia' },
      { slug: ex2, name: `Exchange two ${tag}`, region: 'europe' },
    ],
    organizations: [
      { slug: project, name: `Project ${tag}`, kind: 'project' },
      { slug: mm, name: `Maker ${tag}`, kind: 'market_maker' },
    ],
    assets: [
      { symbol: asset, name: 'Asset', owner: project, labels: ['x'] },
      { symbol: `${asset}_PERP`, name: 'Asset perp', owner: project },
      { symbol: other, name: 'Other', owner: project },
    ],
    pairs: [
      { exchange: ex, pair: `${asset}/USDT`, asset, market_type: 'spot' },
      { exchange: ex2, pair: `${asset}/USD`, asset, market_type: 'spot' },
      { exchange: ex, pair: `${asset}_PERP/USDT`, asset: `${asset}_PERP`, market_type: 'perp' },
      { exchange: ex, pair: `${other}/USDT`, asset: other, market_type: 'spot' },
    ],
    coverage: [{ organization: mm, assets: [asset], exchanges: [ex] }],
    wallets: [{ id: 100000 + parseInt(tag, 16), organization: mm, number: 1, exchange: ex }],
    users: Object.values(users),
  };
  return { tag, ex, ex2, project, mm, asset, other, users, fixture, password };
}

export async function login(email: string, password: string, remember_me?: boolean): Promise<string> {
  const r = await call<{ token: string }>('POST', '/v1/login/', { json: { email, password, ...(remember_me === undefined ? {} : { remember_me }) } });
  if (r.status !== 200) throw new Error(`login ${email} failed: ${r.status} ${r.text}`);
  return r.body.token;
}

export async function seed(fixture: FixtureFile): Promise<void> {
  await testStack().service.deps.loadFixture(fixture);
}

/** A value framed the way any Confluent client frames it: byte 0, the schema id (big-endian int32), the JSON. */
export function framed(schemaId: number, data: unknown): Buffer {
  const header = Buffer.alloc(5);
  header.writeInt32BE(schemaId, 1);
  return Buffer.concat([header, typeof data === 'string' ? Buffer.from(data) : Buffer.from(JSON.stringify(data))]);
}

export interface DeadLetterRecord {
  reason: string;
  value: string | null;
  key: string | null;
  /** The registry id of a framed value (whose JSON text is `value`). */
  schema_id?: number;
  /** Where the message lay in its topic. */
  source: { topic: string; partition: number; offset: string; timestamp: string };
}

/** The records of a dead-letter topic from its start, once there are at least `count` (or once `count` says so). */
export async function dlqRecords(topic: string, count: number | ((records: DeadLetterRecord[]) => boolean)): Promise<DeadLetterRecord[]> {
  const { kafka } = testStack();
  const consumer = kafka.consumer({ groupId: `test-dlq-${Date.now()}-${Math.random()}` });
  const out: DeadLetterRecord[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void out.push(JSON.parse(message.value!.toString()) as DeadLetterRecord) });
  const done = typeof count === 'number' ? () => out.length >= count : () => count(out);
  try {
    await waitFor(typeof count === 'number' ? `${count} dead letters` : 'the dead letters', async () => done(), 30_000);
  } finally {
    await consumer.disconnect();
  }
  return out;
}

/**
 * A topic of one partition and its `.dlq` twin of the test's own, for a consumer under test;
 * `drop()` deletes them.
 */
export async function ownTopic(prefix: string): Promise<{ topic: string; dlqTopic: string; drop(): Promise<void> }> {
  const admin = testStack().kafka.admin();
  await admin.connect();
  const topic = uniq(prefix);
  const dlqTopic = `${topic}.dlq`;
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }, { topic: dlqTopic, numPartitions: 1 }], waitForLeaders: true });
  return {
    topic,
    dlqTopic,
    async drop() {
      await admin.deleteTopics({ topics: [topic, dlqTopic] }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}
