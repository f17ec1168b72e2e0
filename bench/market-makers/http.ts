// The market-maker benchmark's HTTP client, in a process of its own (this file, forked
// with BENCH_MM_CLIENT set), as a user's is: receiving an answer of tens of MiB in the service's
// process would take turns of the event loop the service needs to send it. One request at
// a time over node:http with keep-alive (fetch's web streams read large bodies slower,
// bench/api.ts), each timed there from sending it to the last byte of its body. The push
// (benchPush) runs there too, so sending its requests is not the service's work. With
// an encoding (zstd, gzip), it asks for it and decodes the answer as it comes, the time
// running to the last decoded byte. With `curl`, timed requests go through the curl command
// as a user tries them (`curl -o /dev/null`; with zstd `--compressed`, which accepts zstd,
// br, gzip and deflate; with gzip `--compressed` asking for gzip alone), each on a new
// connection, timed by curl (`time_total`); untimed ones, parsed, still over node:http.
import { execFile, fork } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { benchPush, type PushBenchOptions, type PushBenchResult } from './push.ts';

/** What the client accepts: the text as it is, or an encoding it decodes. */
export type ClientEncoding = 'identity' | 'gzip' | 'zstd';

interface HttpRequest {
  url: string;
  token: string;
  /** Parse the body and count its rows: only untimed requests do (parsing is the client's work). */
  parse?: boolean;
  encoding: ClientEncoding;
  curl: boolean;
}

/** Whether the curl command runs here. */
export async function curlFound(): Promise<boolean> {
  try {
    await promisify(execFile)('curl', ['--version']);
    return true;
  } catch {
    return false;
  }
}

export interface HttpResult {
  ms: number;
  /** The answer's bytes, decoded. */
  bytes: number;
  /** Its bytes as sent (compressed, when it was). */
  wire: number;
  rows: number;
  error?: string;
}

export class HttpClient {
  private readonly child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_MM_CLIENT: '1' }, stdio: 'inherit' });
  private readonly waiting = new Map<number, (r: HttpResult & { push?: PushBenchResult }) => void>();
  private seq = 0;
  private readonly ready: Promise<void>;

  private listen(): void {
    this.child.on('message', (m: { id?: number; push?: PushBenchResult } & HttpResult) => {
      if (m.id === undefined) return;
      this.waiting.get(m.id)?.(m);
      this.waiting.delete(m.id);
    });
    this.child.once('exit', (code) => {
      for (const done of this.waiting.values()) done({ ms: 0, bytes: 0, wire: 0, rows: 0, error: `the client process exited (${code})` });
      this.waiting.clear();
    });
  }

  /** `encoding`: what is accepted (and decoded); `curl`: timed requests through the curl command. */
  constructor(
    private readonly encoding: ClientEncoding,
    private readonly curl = false,
  ) {
    this.ready = new Promise<void>((resolve) => this.child.once('message', () => resolve()));
    this.listen();
  }

  async get(url: string, token: string, opts: { parse?: boolean } = {}): Promise<HttpResult> {
    await this.ready;
    const id = ++this.seq;
    const req: HttpRequest = { url, token, parse: opts.parse, encoding: this.encoding, curl: this.curl };
    const r = await new Promise<HttpResult>((resolve) => {
      this.waiting.set(id, resolve);
      this.child.send({ id, ...req });
    });
    if (r.error) throw new Error(`GET ${url}: ${r.error}`);
    return r;
  }

  /** benchPush, run in the client process. */
  async push(opts: PushBenchOptions): Promise<PushBenchResult> {
    await this.ready;
    const id = ++this.seq;
    const r = await new Promise<HttpResult & { push?: PushBenchResult }>((resolve) => {
      this.waiting.set(id, resolve);
      this.child.send({ id, push: opts });
    });
    if (r.error || !r.push) throw new Error(`push: ${r.error ?? 'no result'}`);
    return r.push;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send('stop');
    await exited;
  }
}

/** A zstd decoder: Node's own (22.15 and newer). */
function unzstd(): zlib.Gunzip {
  const make = (zlib as unknown as { createZstdDecompress?: () => zlib.Gunzip }).createZstdDecompress;
  if (!make) throw new Error('decoding zstd over node:http needs Node 22.15 or newer (or --client curl)');
  return make();
}

async function runClient(): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const send = (m: HttpRequest) =>
    new Promise<{ ms: number; status: number; parts: Buffer[]; bytes: number; wire: number }>((resolve, reject) => {
      const t = performance.now();
      const headers = { Authorization: `Token ${m.token}`, ...(m.encoding !== 'identity' ? { 'Accept-Encoding': m.encoding } : {}) };
      const req = http.request(m.url, { method: 'GET', agent, headers }, (res) => {
        // The body kept only to be parsed or shown: holding a timed answer of 176 MiB kept
        // this process's collector busy on a core the service needs, as `curl -o
        // /dev/null` does not.
        const keep = m.parse === true || res.statusCode !== 200;
        const parts: Buffer[] = [];
        let wire = 0;
        let bytes = 0;
        res.on('data', (c: Buffer) => (wire += c.length));
        const coding = res.headers['content-encoding'];
        const body: NodeJS.ReadableStream = coding === 'gzip' ? res.pipe(zlib.createGunzip({ chunkSize: 1 << 20 })) : coding === 'zstd' ? res.pipe(unzstd()) : res;
        body.on('data', (c: Buffer) => {
          bytes += c.length;
          if (keep) parts.push(c);
        });
        body.on('end', () => resolve({ ms: performance.now() - t, status: res.statusCode ?? 0, parts, bytes, wire }));
        body.on('error', reject);
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  // A timed request through curl: its status, bytes received and time, from curl's own
  // report. The token goes in on its standard input, not in its arguments, which any
  // process of the machine can read.
  const sendCurl = (m: HttpRequest): Promise<{ ms: number; status: number; wire: number }> =>
    new Promise((resolve, reject) => {
      const args = ['-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', '-H', '@-', ...(m.encoding !== 'identity' ? ['--compressed'] : []), m.url];
      const child = execFile('curl', args, (err, stdout) => {
        if (err) return reject(err);
        const [status, wire, seconds] = stdout.trim().split(' ').map(Number) as [number, number, number];
        resolve({ ms: seconds * 1000, status, wire });
      });
      child.stdin?.end(`Authorization: Token ${m.token}\n${m.encoding === 'gzip' ? 'Accept-Encoding: gzip\n' : ''}`);
    });
  await new Promise<void>((resolve) => {
    process.on('message', (m: 'stop' | ({ id: number } & HttpRequest) | { id: number; push: PushBenchOptions }) => {
      if (m === 'stop') return resolve();
      if ('push' in m) {
        benchPush(m.push).then(
          (push) => process.send?.({ id: m.id, ms: 0, bytes: 0, wire: 0, rows: 0, push }),
          (e: unknown) => process.send?.({ id: m.id, ms: 0, bytes: 0, wire: 0, rows: 0, error: String(e) }),
        );
        return;
      }
      void (async () => {
        try {
          if (m.curl && !m.parse) {
            const { ms, status, wire } = await sendCurl(m);
            // Bytes decoded are not in curl's report: those of the untimed requests stand (NaN).
            if (status === 200) return process.send?.({ id: m.id, ms, bytes: m.encoding !== 'identity' ? NaN : wire, wire, rows: 0 });
            // The error's text, asked again.
          }
          const { ms, status, parts, bytes, wire } = await send(m);
          if (status !== 200) return process.send?.({ id: m.id, ms, bytes: 0, wire, rows: 0, error: `${status} ${Buffer.concat(parts).toString('utf8', 0, 300)}` });
          let rows = 0;
          if (m.parse) {
            const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
            rows = Array.isArray(body) ? body.length : 0;
          }
          process.send?.({ id: m.id, ms, bytes, wire, rows });
        } catch (e) {
          process.send?.({ id: m.id, ms: 0, bytes: 0, wire: 0, rows: 0, error: String(e) });
        }
      })();
    });
    process.send?.({ ready: true });
  });
  agent.destroy();
}

if (process.env.BENCH_MM_CLIENT) {
  await runClient();
  process.exit(0);
}
