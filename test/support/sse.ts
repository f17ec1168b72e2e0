// A server-sent events client for tests, over plain node:http: it keeps every event and
// comment it reads, in order, and can stop reading (a slow client) and start again.
import http from 'node:http';

export interface SseEvent {
  type: string;
  id: string | undefined;
  data: string;
}

const parsedData = new WeakMap<SseEvent, unknown>();
const parsed = (e: SseEvent): unknown => {
  if (!parsedData.has(e)) parsedData.set(e, JSON.parse(e.data));
  return parsedData.get(e);
};

export class SseClient {
  readonly events: SseEvent[] = [];
  /** Comment lines (heartbeats) read so far. */
  comments = 0;
  /** The id of the last block that carried one (as an EventSource keeps it). */
  lastId: string | undefined;
  retry: number | undefined;
  ended = false;
  private buffer = '';
  private readonly waiters = new Set<() => void>();

  private constructor(
    readonly res: http.IncomingMessage,
    private readonly req: http.ClientRequest,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.read(chunk));
    res.on('end', () => this.finish());
    res.on('close', () => this.finish());
    res.on('error', () => this.finish());
    // After the answer began, a reset connection is the stream's end, not the test's failure.
    req.on('error', () => this.finish());
  }

  /** Opens the stream; a non-200 answer comes back as { status, body }. */
  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient | { status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.get(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
        if (res.statusCode !== 200) {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          return;
        }
        resolve(new SseClient(res, req));
      });
      req.on('error', reject);
    });
  }

  static async connect(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = await SseClient.open(url, headers);
    if (!(c instanceof SseClient)) throw new Error(`stream ${url} answered ${c.status}: ${c.body}`);
    return c;
  }

  /** Waits until `done` holds over what was read (or the stream ends, or the time is up). */
  async until(what: string, done: (c: SseClient) => boolean, timeoutMs = 30_000): Promise<void> {
    if (done(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; read ${this.events.length} events: ${this.events.slice(-5).map((e) => `${e.type} ${e.data.slice(0, 120)}`).join(' | ')}`));
      }, timeoutMs);
      const check = () => {
        if (!done(this) && !this.ended) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        if (done(this)) resolve();
        else reject(new Error(`the stream ended while waiting for ${what}`));
      };
      this.waiters.add(check);
    });
  }

  /** The events of a type, their data parsed. */
  // Tests read whatever the events carry.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  of<T = any>(type: string, pick: (data: T) => boolean = () => true): T[] {
    return this.events.filter((e) => e.type === type).map((e) => parsed(e) as T).filter(pick);
  }

  pause(): void {
    this.res.pause();
  }

  resume(): void {
    this.res.resume();
  }

  close(): void {
    this.req.destroy();
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    for (const w of [...this.waiters]) w();
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    // One pass over the blocks, one cut at the end: a chunk may hold thousands of events.
    let start = 0;
    for (let cut = this.buffer.indexOf('\n\n'); cut >= 0; cut = this.buffer.indexOf('\n\n', start)) {
      const block = this.buffer.slice(start, cut);
      start = cut + 2;
      let type = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments++;
        else if (line.startsWith('event: ')) type = line.slice(7);
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
        else if (line.startsWith('retry: ')) this.retry = Number(line.slice(7));
      }
      if (id !== undefined) this.lastId = id;
      if (data.length > 0) this.events.push({ type, id, data: data.join('\n') });
    }
    this.buffer = this.buffer.slice(start);
    for (const w of [...this.waiters]) w();
  }
}
