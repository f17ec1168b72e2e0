// The gateway retries a statement that failed for a transient reason, when repeating it is
// safe, against a local HTTP server standing in for ClickHouse: it answers in ClickHouse's
// HTTP format (JSONEachRow rows, empty bodies for commands and inserts, exception text with
// X-ClickHouse-Exception-Code) and fails the requests a test tells it to.
import { expect } from 'chai';
import { ClickHouseError } from '@clickhouse/client';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { ClickHouseQueryError, openClickHouse, transientReason, type ClickHouse } from '../../lib/clickhouse.ts';
import { createLogger, silentLogger, type Logger } from '../../lib/log.ts';

interface Seen {
  queryId: string;
  params: URLSearchParams;
  body: string;
}

type Reply = (res: http.ServerResponse, seen: Seen) => void;

const ok =
  (body = ''): Reply =>
  (res, seen) => {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Query-Id': seen.queryId, 'X-ClickHouse-Summary': '{"read_rows":"1"}' });
    res.end(body);
  };

/** ClickHouse's own failure: its code in a header and in the body's exception text. */
const exception =
  (code: number, type: string, status = 500): Reply =>
  (res, seen) => {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Query-Id': seen.queryId, 'X-ClickHouse-Exception-Code': String(code) });
    res.end(`Code: ${code}. DB::Exception: something went wrong. (${type}) (version 24.8.4.13 (official build))\n`);
  };

/** A proxy in front of the server answering for it: a status and a body that is not ClickHouse's. */
const proxy =
  (status: number): Reply =>
  (res) => {
    res.writeHead(status, { 'Content-Type': 'text/html' });
    res.end('<html><body>upstream unavailable</body></html>');
  };

/** The connection drops before an answer ("socket hang up", ECONNRESET). */
const hangUp: Reply = (res) => {
  res.socket?.destroy();
};

const TOO_MANY_QUERIES = exception(202, 'TOO_MANY_SIMULTANEOUS_QUERIES');

/** Answers the nth request with replies[n], the last reply once they run out. */
async function fakeClickHouse(replies: Reply[]): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const params = new URL(req.url ?? '/', 'http://x').searchParams;
      const s: Seen = { queryId: params.get('query_id') ?? '', params, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(s);
      replies[Math.min(seen.length, replies.length) - 1]!(res, s);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const gateways: ClickHouse[] = [];
const servers: { close: () => Promise<void> }[] = [];

function open(url: string, opts: { retries?: number; log?: Logger } = {}): ClickHouse {
  const ch = openClickHouse({ clickhouseUrl: url, clickhouseDatabase: 'x', dataDir: path.join(os.tmpdir(), 'mm-retry-unused') }, 'test', {
    retry: { retries: opts.retries ?? 3, baseDelayMs: 1 },
    log: opts.log ?? silentLogger,
  });
  gateways.push(ch);
  return ch;
}

async function serve(...replies: Reply[]) {
  const server = await fakeClickHouse(replies);
  servers.push(server);
  return { ...server, ch: open(server.url) };
}

async function failure(p: Promise<unknown>): Promise<ClickHouseQueryError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(ClickHouseQueryError);
    return e as ClickHouseQueryError;
  }
  throw new Error('expected the statement to fail');
}

async function text(body: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

describe('ClickHouse gateway retries (lib/clickhouse.ts)', () => {
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((ch) => ch.close()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  for (const [what, reply] of [
    ['HTTP 503 from a proxy', proxy(503)],
    ['ClickHouse code 202 (TOO_MANY_SIMULTANEOUS_QUERIES)', TOO_MANY_QUERIES],
    ['a dropped connection', hangUp],
  ] as const) {
    it(`retries a SELECT that failed with ${what}, under a new query id`, async () => {
      const { ch, seen } = await serve(reply, ok('{"n":1}\n'));
      expect(await ch.query<{ n: number }>('SELECT {n:UInt8} AS n', { n: 1 })).to.deep.equal([{ n: 1 }]);
      expect(seen).to.have.length(2);
      expect(seen[1]!.queryId).to.equal(`${seen[0]!.queryId}-r1`);
      expect(seen[1]!.body).to.equal(seen[0]!.body);
    });
  }

  it('does not retry an error that is not transient (code 62, SYNTAX_ERROR; HTTP 500 from a proxy)', async () => {
    for (const reply of [exception(62, 'SYNTAX_ERROR', 400), proxy(500)]) {
      const { ch, seen } = await serve(reply, ok('{"n":1}\n'));
      const e = await failure(ch.query('SELEC 1'));
      expect(seen).to.have.length(1);
      expect(e.attempts).to.equal(1);
      expect(e.queryId).to.equal(seen[0]!.queryId);
    }
  });

  it('retries jsonArray and jsonLines before their answer is handed back', async () => {
    const a = await serve(proxy(502), ok('[\n{"n":1}\n]\n'));
    expect(await text(await a.ch.jsonArray('SELECT 1 AS n', ['n']))).to.equal('[\n{"n":1}\n]\n');
    expect(a.seen).to.have.length(2);
    const l = await serve(proxy(504), ok('1\t{"n":1}\n'));
    expect((await l.ch.jsonLines('SELECT 1 AS k, 1 AS n', ['k'], ['n'])).toString()).to.equal('1\t{"n":1}\n');
    expect(l.seen).to.have.length(2);
  });

  it('retries an insert with a dedupToken under the same token; not one without', async () => {
    const withToken = await serve(hangUp, ok());
    await withToken.ch.insert('t', [{ a: 1 }], { dedupToken: 'tok-1' });
    expect(withToken.seen).to.have.length(2);
    expect(withToken.seen.map((s) => s.params.get('insert_deduplication_token'))).to.deep.equal(['tok-1', 'tok-1']);
    expect(withToken.seen[1]!.queryId).to.equal(`${withToken.seen[0]!.queryId}-r1`);
    expect(withToken.seen[1]!.body).to.equal(withToken.seen[0]!.body);

    const without = await serve(TOO_MANY_QUERIES, ok());
    const e = await failure(without.ch.insert('t', [{ a: 1 }]));
    expect(without.seen).to.have.length(1);
    expect(e.message).to.match(/after 1 attempt:/);
  });

  it('sends many rows, encoded in slices, as the JSON lines of the rows in order, and the same again on a retry', async () => {
    const rows = Array.from({ length: 1001 }, (_, i) => ({ a: i, s: `row "${i}"\n`, x: [i / 3, null] }));
    const { ch, seen } = await serve(hangUp, ok());
    await ch.insert('t', rows, { dedupToken: 'tok-2' });
    expect(seen).to.have.length(2);
    expect(seen[0]!.body).to.equal(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    expect(seen[1]!.body).to.equal(seen[0]!.body);
  });

  it('retries a command only when it is marked idempotent', async () => {
    const marked = await serve(proxy(503), ok());
    await marked.ch.command('INSERT INTO h SELECT 1', {}, { idempotent: true });
    expect(marked.seen).to.have.length(2);

    const unmarked = await serve(proxy(503), ok());
    await failure(unmarked.ch.command('INSERT INTO c SELECT 1'));
    expect(unmarked.seen).to.have.length(1);
  });

  it('gives up after the attempts, naming them and the last query id', async () => {
    const server = await fakeClickHouse([TOO_MANY_QUERIES]);
    servers.push(server);
    const ch = open(server.url, { retries: 2 });
    const e = await failure(ch.query('SELECT 1'));
    expect(server.seen.map((s) => s.queryId)).to.deep.equal([server.seen[0]!.queryId, `${server.seen[0]!.queryId}-r1`, `${server.seen[0]!.queryId}-r2`]);
    expect(e.attempts).to.equal(3);
    expect(e.queryId).to.equal(server.seen[2]!.queryId);
    expect(e.message).to.match(new RegExp(`^ClickHouse query ${e.queryId} failed after 3 attempts: `));
    expect((e.cause as ClickHouseError).code).to.equal('202');
  });

  it('retries a refused connection (no server), then gives up', async () => {
    const server = await fakeClickHouse([ok()]);
    const url = server.url;
    await server.close();
    const e = await failure(open(url, { retries: 1 }).query('SELECT 1'));
    expect(e.attempts).to.equal(2);
    expect((e.cause as NodeJS.ErrnoException).code).to.equal('ECONNREFUSED');
  });

  it('logs a retry by query id and code, without the SQL, its parameters or the message', async () => {
    const lines: string[] = [];
    const server = await fakeClickHouse([TOO_MANY_QUERIES, ok('{"n":1}\n')]);
    servers.push(server);
    const ch = open(server.url, { log: createLogger('warn', 'test', (l) => lines.push(l)) });
    await ch.query('SELECT {secret:String} AS n', { secret: 'hunter2' });
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include(`query_id=${server.seen[0]!.queryId}`).and.include('reason=clickhouse-202');
    expect(lines[0]).not.to.match(/hunter2|SELECT|something went wrong/);
  });

  it('classifies by codes, never by message text', () => {
    // ClickHouseError of the client, and the same shape from chdb's own copy of client-common.
    expect(transientReason(new ClickHouseError({ message: 'm', code: '209', type: 'SOCKET_TIMEOUT' }))).to.equal('clickhouse-209');
    expect(transientReason(Object.assign(new Error('m'), { code: '252', type: 'TOO_MANY_PARTS' }))).to.equal('clickhouse-252');
    expect(transientReason(Object.assign(new Error('m'), { code: '62', type: 'SYNTAX_ERROR' }))).to.equal(undefined);
    expect(transientReason(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).to.equal('ECONNRESET');
    expect(transientReason(Object.assign(new Error('m'), { code: 'ENOTFOUND' }))).to.equal(undefined);
    // A ClickHouse code decides even when the status alone would be transient.
    expect(transientReason(Object.assign(new Error('m'), { code: '76' }), 503)).to.equal(undefined);
    expect(transientReason(new Error('<html>503 Service Unavailable</html>'), 503)).to.equal('http-503');
    expect(transientReason(new Error('ECONNRESET: Too many simultaneous queries. (TOO_MANY_SIMULTANEOUS_QUERIES)'))).to.equal(undefined);
    expect(transientReason(new Error('Timeout error.'))).to.equal(undefined);
  });
});
