// An answer sent as pieces of text, each compressed once and kept compressed, in the
// encoding a client asks for. zstd (preferred: clients decode it several times faster): each
// piece a frame of its own, frames one after the other being one stream (zstd.ts). gzip:
// one member whose deflate stream is the pieces' own streams one after the other. Each
// piece is deflated alone and ended by a sync flush (its output ends on a byte, no block
// final, no reference to anything before it), so any sequence of pieces is a valid stream;
// the trailer's CRC-32 is combined from the pieces' own. A month of market-maker rows is
// tens of MiB of text: compressed per request it took seconds (zlib and brotli run at tens
// of MB/s here), while the pieces of sealed buckets are the same for every request.
//
// A run of pieces (a market maker's pair's sealed days, one after the other in every answer
// that holds them) is compressed as one zstd frame as well: a client decodes each frame at
// a cost of its own (a month is 30,000 pieces), and rows in one frame share their keys.
//
// An answer mostly not compressed yet goes as plain text, the rest of pieces not compressed
// as they are, framed (stored deflate blocks, raw zstd blocks), so an answer never waits for
// compression; compressInBackground then compresses kept pieces off the main thread, a batch
// at a time, for the requests after.
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import type { Context } from 'koa';
import { rawFrame, zstdFrames } from './zstd.ts';

/** The encodings an answer of pieces is sent in, besides its plain text. */
export type Encoding = 'zstd' | 'gzip';

/** Deflate level of pieces: the fastest, as every kept piece is compressed once, in the background. */
const LEVEL = 1;

const DEFLATE: zlib.ZlibOptions = { level: LEVEL, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const deflateRaw = promisify(zlib.deflateRaw);

/** Bytes as stored (uncompressed) deflate blocks, not final: a header of 5 bytes per 65,535. */
function storedBlocks(raw: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < raw.length; at += 0xffff) {
    const part = raw.subarray(at, at + 0xffff);
    const head = Buffer.alloc(5);
    head.writeUInt16LE(part.length, 1);
    head.writeUInt16LE(~part.length & 0xffff, 3);
    out.push(head, part);
  }
  return out;
}

/** Each text compressed alone, in order. */
const COMPRESSORS: Record<Encoding, (raws: readonly Buffer[]) => Promise<Buffer[]>> = {
  gzip: async (raws) => {
    const out: Buffer[] = [];
    for (const r of raws) out.push(await deflateRaw(r, DEFLATE));
    return out;
  },
  zstd: (raws) => zstdFrames(raws),
};

/** Text compressed per hand-over to a compressor (at least): a few milliseconds of work, after which whether the pieces are still kept is asked again. */
const BATCH_BYTES = 256 * 1024;

/** What is compressed into one form: a piece, or a run of pieces (commas between) into one zstd frame. */
type Unit = readonly Piece[];

interface Job {
  units: Unit[];
  encoding: Encoding;
  kept: () => boolean;
  done: () => void;
}

const jobs: Job[] = [];
let draining: Promise<void> | undefined;

const isDone = (u: Unit, encoding: Encoding) => (u.length === 1 ? u[0]!.isCompressed(encoding) : u[0]!.hasRun(u));

function enqueue(units: Unit[], encoding: Encoding, kept: () => boolean, done: () => void): void {
  const q = queued[encoding];
  const todo = units.filter((u) => !isDone(u, encoding) && u[0]!.raw.length > 0 && !q.has(u[0]!));
  if (todo.length === 0) return;
  for (const u of todo) q.add(u[0]!);
  jobs.push({ units: todo, encoding, kept, done });
  draining ??= drain();
}

/**
 * Compresses pieces into `encoding`, off the main thread, a batch at a time for the whole
 * process (the other core serves requests), while `kept()` holds (the pieces are still
 * kept), then calls `done` if any was compressed. Pieces already compressed or queued are skipped.
 */
export function compressInBackground(pieces: Iterable<Piece>, encoding: Encoding, kept: () => boolean, done: () => void): void {
  enqueue([...pieces].map((p) => [p]), encoding, kept, done);
}

/** Compresses each run (two pieces or more, in an answer's order) into one zstd frame, kept by its first piece; as compressInBackground. */
export function compressRunsInBackground(runs: readonly (readonly Piece[])[], kept: () => boolean, done: () => void): void {
  enqueue(
    runs.filter((r) => r.length > 1),
    'zstd',
    kept,
    done,
  );
}

/** A run's text: its pieces with a comma between each two. */
function runText(run: Unit): Buffer {
  const parts: Buffer[] = [];
  for (const p of run) {
    if (parts.length > 0) parts.push(COMMA.raw);
    parts.push(p.raw);
  }
  return Buffer.concat(parts);
}

async function drain(): Promise<void> {
  // Runs after the caller has recorded it (`draining`), and until the queue is found empty,
  // in the same turn that forgets it: a job queued after that turn starts another run.
  await undefined;
  for (let job = jobs.shift(); job; job = jobs.shift()) {
    let made = false;
    try {
      for (let at = 0; at < job.units.length && job.kept(); ) {
        const batch: [Unit, Buffer][] = [];
        for (let bytes = 0; at < job.units.length && bytes < BATCH_BYTES; at++) {
          const u = job.units[at]!;
          if (isDone(u, job.encoding)) continue;
          const text = u.length === 1 ? u[0]!.raw : runText(u);
          batch.push([u, text]);
          bytes += text.length;
        }
        if (batch.length === 0) continue;
        const forms = await COMPRESSORS[job.encoding](batch.map(([, text]) => text));
        batch.forEach(([u, text], i) => {
          const form = forms[i]!;
          made = (u.length === 1 ? u[0]!.setCompressed(job!.encoding, form) : u[0]!.setRun(u, form, text.length)) || made;
        });
      }
    } catch {
      // A piece left uncompressed goes as it is, framed: nothing is lost but bytes.
    } finally {
      for (const u of job.units) queued[job.encoding].delete(u[0]!);
      if (made) job.done();
    }
  }
  draining = undefined;
}

/** Resolves once no background compression runs (benchmarks start a first-asked request after it, as after a restart). */
export async function compressionIdle(): Promise<void> {
  while (draining) await draining;
}

const queued: Record<Encoding, WeakSet<Piece>> = { gzip: new WeakSet(), zstd: new WeakSet() };

/** A zstd frame of a comma, put before a piece's own frame in its kept form (see `zstdAfterComma`). */
const COMMA_FRAME = Buffer.concat(rawFrame(Buffer.from(',')));

let pieceCount = 0;

export class Piece {
  /** Names it in the runs it is part of: a run's frame is sent only for the same pieces. */
  readonly id = pieceCount++;
  private crcValue: number | undefined;
  private deflatedValue: Buffer | undefined;
  private zstdValue: Buffer | undefined;
  /** The zstd frame of a run this piece begins (after a comma's frame, as zstdValue), the run's pieces and its text's length. */
  private runValue: { ids: readonly number[]; frame: Buffer; length: number } | undefined;

  constructor(readonly raw: Buffer) {}

  get crc(): number {
    return (this.crcValue ??= zlib.crc32(this.raw));
  }

  /** Makes its deflated form now; whether it was not made before. */
  compress(): boolean {
    if (this.deflatedValue !== undefined) return false;
    this.deflatedValue = zlib.deflateRawSync(this.raw, DEFLATE);
    return true;
  }

  /** Keeps its form in `encoding` (a deflate stream, a zstd frame); whether it was not kept before. */
  setCompressed(encoding: Encoding, form: Buffer): boolean {
    if (this.isCompressed(encoding)) return false;
    // A zstd frame is kept after a comma's frame: in an answer a piece mostly follows a comma,
    // and the two go to the socket as one buffer.
    if (encoding === 'zstd') this.zstdValue = Buffer.concat([COMMA_FRAME, form]);
    else this.deflatedValue = form;
    return true;
  }

  /** Its deflate stream as it is now: compressed once made, else stored blocks. */
  streamNow(): Buffer[] {
    return this.deflatedValue !== undefined ? [this.deflatedValue] : storedBlocks(this.raw);
  }

  /** Its zstd frame as it is now: compressed once made, else raw blocks. */
  frameNow(): Buffer[] {
    return this.zstdValue !== undefined ? [this.zstdValue.subarray(COMMA_FRAME.length)] : rawFrame(this.raw);
  }

  /** A comma's frame and its own, as one buffer once compressed. */
  zstdAfterComma(): Buffer[] {
    return this.zstdValue !== undefined ? [this.zstdValue] : [COMMA_FRAME, ...rawFrame(this.raw)];
  }

  /** Keeps the zstd frame of `run` (this piece first, commas between; `length` its text's); whether it was not kept before. */
  setRun(run: Unit, frame: Buffer, length: number): boolean {
    if (run[0] !== this || this.hasRun(run)) return false;
    this.runValue = { ids: run.map((p) => p.id), frame: Buffer.concat([COMMA_FRAME, frame]), length };
    return true;
  }

  /** Whether the frame of this run is kept. */
  hasRun(run: Unit): boolean {
    const ids = this.runValue?.ids;
    return ids !== undefined && ids.length === run.length && run.every((p, i) => p.id === ids[i]);
  }

  /**
   * The kept run's frame (a comma's frame before it) when `pieces` from `at` (this piece) hold
   * that run, commas between, and the index of its last piece there.
   */
  runIn(pieces: readonly Piece[], at: number): { frame: Buffer; last: number; length: number } | undefined {
    const r = this.runValue;
    if (r === undefined) return undefined;
    for (let k = 1; k < r.ids.length; k++) if (pieces[at + 2 * k - 1] !== COMMA || pieces[at + 2 * k]?.id !== r.ids[k]) return undefined;
    return { frame: r.frame, last: at + 2 * (r.ids.length - 1), length: r.length };
  }

  isCompressed(encoding: Encoding): boolean {
    return (encoding === 'zstd' ? this.zstdValue : this.deflatedValue) !== undefined;
  }

  /** Bytes held: raw and the compressed forms made. */
  get bytes(): number {
    return this.raw.length + (this.deflatedValue?.length ?? 0) + (this.zstdValue?.length ?? 0) + (this.runValue?.frame.length ?? 0);
  }
}

/** Pieces of punctuation, shared, in every form from the start (a zstd frame of raw bytes: nothing to gain). */
export const [OPEN, COMMA, CLOSE] = ['[', ',', ']'].map((t) => {
  const p = new Piece(Buffer.from(t));
  p.compress();
  p.setCompressed('zstd', Buffer.concat(rawFrame(p.raw)));
  return p;
}) as [Piece, Piece, Piece];

// CRC-32 combination (zlib's crc32_combine): the CRC of A then B from both CRCs and B's
// length, by multiplying A's CRC by x^(8 len(B)) modulo the CRC's polynomial.
const POLY = 0xedb88320;

function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) modulo the polynomial, k = 0..31. */
const X2N: number[] = (() => {
  const out: number[] = [];
  let p = 0x40000000; // x^1
  for (let k = 0; k < 32; k++) {
    out.push(p);
    p = multModP(p, p);
  }
  return out;
})();

/** x^(n 2^k) modulo the polynomial. */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n) {
    if (n & 1) p = multModP(X2N[k & 31]!, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** The CRC-32 of A followed by B. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(x2nModP(lengthB, 3), crcA) ^ crcB) >>> 0;
}

const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** An empty final block of fixed codes: the end of the deflate stream. */
const LAST_BLOCK = Buffer.from([3, 0]);

/** The pieces as one gzip member: its header, each piece's deflate stream, the end and the trailer. */
export function gzipBuffers(pieces: readonly Piece[]): Buffer[] {
  let crc = 0;
  let length = 0;
  // One shift per distinct length: pieces of one answer often share theirs.
  const shifts = new Map<number, number>();
  const out: Buffer[] = [GZIP_HEADER];
  for (const p of pieces) {
    const n = p.raw.length;
    if (n === 0) continue;
    let shift = shifts.get(n);
    if (shift === undefined) shifts.set(n, (shift = x2nModP(n, 3)));
    crc = (multModP(shift, crc) ^ p.crc) >>> 0;
    length += n;
    for (const b of p.streamNow()) out.push(b);
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc, 0);
  trailer.writeUInt32LE(length % 2 ** 32, 4);
  out.push(LAST_BLOCK, trailer);
  return out;
}

/**
 * The pieces' raw text, pieces that lie one after the other in memory as one view: a
 * month's answer is tens of thousands of pieces with a comma piece between each two, most
 * of them written so (row-text.ts writes a comma after each group), and each buffer handed
 * to the socket costs as much as many bytes. A comma piece is joined only when the byte
 * between its neighbours is that comma: a byte owned by the text both were written in, or
 * padding of Node's pool that is never handed out, so never written again while sent.
 */
export function rawBuffers(pieces: readonly Piece[]): Buffer[] {
  const out: Buffer[] = [];
  let run: Buffer | undefined;
  let held: Buffer | undefined;
  const flush = () => {
    if (run) out.push(run);
    if (held) out.push(held);
    run = held = undefined;
  };
  for (const p of pieces) {
    const b = p.raw;
    if (b.length === 0) continue;
    if (run && !held && b.length === 1 && b.buffer !== run.buffer) {
      // A comma (or any one byte) of its own: held until the next piece shows whether the run's bytes go on past it.
      held = b;
      continue;
    }
    const gap = held ? 1 : 0;
    if (run && b.buffer === run.buffer && b.byteOffset === run.byteOffset + run.length + gap && (gap === 0 || new Uint8Array(run.buffer, b.byteOffset - 1, 1)[0] === held![0])) {
      run = Buffer.from(run.buffer, run.byteOffset, run.length + gap + b.length);
      held = undefined;
      continue;
    }
    flush();
    run = b;
  }
  flush();
  return out;
}

/**
 * The pieces as zstd frames one after the other: a kept run's frame for its pieces, else
 * each piece's. A frame after a comma goes with the comma's frame as one buffer when
 * compressed (its kept form): half as many buffers. `counted` receives the text's bytes and
 * those sent compressed.
 */
export function zstdBuffers(pieces: readonly Piece[], counted?: { all: number; compressed: number }): Buffer[] {
  const out: Buffer[] = [];
  let all = 0;
  let compressed = 0;
  let comma = false;
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i]!;
    if (p.raw.length === 0) continue;
    if (p === COMMA) {
      if (comma) for (const b of COMMA.frameNow()) out.push(b);
      comma = true;
      all += 1;
      compressed += 1;
      continue;
    }
    const run = p.runIn(pieces, i);
    if (run) {
      out.push(comma ? run.frame : run.frame.subarray(COMMA_FRAME.length));
      all += run.length;
      compressed += run.length;
      i = run.last;
    } else {
      for (const b of comma ? p.zstdAfterComma() : p.frameNow()) out.push(b);
      all += p.raw.length;
      if (p.isCompressed('zstd')) compressed += p.raw.length;
    }
    comma = false;
  }
  if (comma) for (const b of COMMA.frameNow()) out.push(b);
  if (counted) {
    counted.all = all;
    counted.compressed = compressed;
  }
  return out;
}

/** A weight (q) of each encoding named in an Accept-Encoding header. */
function weights(header: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';').map((t) => t.trim().toLowerCase());
    if (!name) continue;
    const q = params.find((t) => /^q\s*=/.test(t));
    out.set(name, q === undefined ? 1 : Number(q.slice(q.indexOf('=') + 1)) || 0);
  }
  return out;
}

/**
 * The encoding to send pieces in, undefined for the text as it is: zstd or gzip as the
 * client accepts them over the text as it is, zstd when both are given the same weight
 * (a client's order, "deflate, gzip, br, zstd" from curl, is no preference).
 */
export function answerEncoding(ctx: Context): Encoding | undefined {
  const zstd = ctx.acceptsEncodings('zstd', 'identity') === 'zstd';
  const gzip = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
  if (zstd && gzip) {
    const w = weights(ctx.get('Accept-Encoding'));
    const q = (e: string) => w.get(e) ?? w.get('*') ?? 0;
    return q('gzip') > q('zstd') ? 'gzip' : 'zstd';
  }
  return zstd ? 'zstd' : gzip ? 'gzip' : undefined;
}

/** The share of the pieces' text already deflated (zstd's is counted by zstdBuffers, runs and all). */
function deflatedShare(pieces: readonly Piece[]): number {
  let all = 0;
  let done = 0;
  for (const p of pieces) {
    all += p.raw.length;
    if (p.isCompressed('gzip')) done += p.raw.length;
  }
  return all === 0 ? 1 : done / all;
}

/**
 * Sends the pieces: in `encoding` (answerEncoding) when at least half of the text is
 * compressed into it already, else as it is (framing, and a gzip CRC, would cost the first
 * answer time and save no byte). Never through the compression middleware, which would
 * compress all of it again, and not as a stream: every buffer is handed to the socket at
 * once (corked: one writev, libuv writing on as the client reads), none copied. The pieces
 * are kept between requests anyway, so holding them until sent costs no memory, where
 * gathering a month's 30,000 pieces into chunks cost a copy of all of it per request.
 */
export function sendPieces(ctx: Context, pieces: readonly Piece[], encoding: Encoding | undefined, type = 'application/json'): void {
  ctx.type = type;
  ctx.vary('Accept-Encoding');
  let sent: Encoding | undefined;
  let buffers: Buffer[] | undefined;
  if (encoding === 'zstd') {
    const counted = { all: 0, compressed: 0 };
    const frames = zstdBuffers(pieces, counted);
    if (counted.compressed >= counted.all / 2) [sent, buffers] = ['zstd', frames];
  } else if (encoding === 'gzip' && deflatedShare(pieces) >= 0.5) [sent, buffers] = ['gzip', gzipBuffers(pieces)];
  if (sent) ctx.set('Content-Encoding', sent);
  buffers ??= rawBuffers(pieces);
  ctx.status = 200;
  ctx.length = buffers.reduce((n, b) => n + b.length, 0);
  ctx.respond = false;
  const res = ctx.res;
  res.cork();
  for (const b of buffers) res.write(b);
  res.end();
}
