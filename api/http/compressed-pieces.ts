// An answer sent as pieces of text, each compressed once and kept compressed: one gzip
// member whose deflate stream is the pieces' own streams one after the other. Each piece is
// deflated alone and ended by a sync flush (its output ends on a byte, no block final, no
// reference to anything before it), so any sequence of pieces is a valid stream; the
// trailer's CRC-32 is combined from the pieces' own. A month of market-maker rows is tens
// of MiB of text: compressed per request it took seconds (zlib and brotli run at tens of
// MB/s here), while the pieces of sealed buckets are the same for every request.
//
// An answer mostly not compressed yet goes as plain text, the rest of pieces not compressed
// in stored blocks (their bytes as they are, framed), so an answer never waits for
// compression; compressInBackground then compresses kept pieces on zlib's threads, one at
// a time, for the requests after.
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import type { Context } from 'koa';

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

interface Job {
  pieces: Piece[];
  kept: () => boolean;
  done: () => void;
}

const jobs: Job[] = [];
let draining: Promise<void> | undefined;

/**
 * Compresses pieces on zlib's threads, one piece at a time for the whole process (the other
 * core serves requests), while `kept()` holds (the pieces are still kept), then calls `done`
 * if any was compressed. Pieces already compressed or queued are skipped.
 */
export function compressInBackground(pieces: Iterable<Piece>, kept: () => boolean, done: () => void): void {
  const todo = [...pieces].filter((p) => !p.isDeflated && p.raw.length > 0 && !queued.has(p));
  if (todo.length === 0) return;
  for (const p of todo) queued.add(p);
  jobs.push({ pieces: todo, kept, done });
  draining ??= drain();
}

async function drain(): Promise<void> {
  // Runs after the caller has recorded it (`draining`), and until the queue is found empty,
  // in the same turn that forgets it: a job queued after that turn starts another run.
  await undefined;
  for (let job = jobs.shift(); job; job = jobs.shift()) {
    let made = false;
    try {
      for (const p of job.pieces) {
        if (!job.kept()) break;
        made = (await p.compressSoon()) || made;
      }
    } catch {
      // A piece left uncompressed goes in stored blocks: nothing is lost but bytes.
    } finally {
      for (const p of job.pieces) queued.delete(p);
      if (made) job.done();
    }
  }
  draining = undefined;
}

/** Resolves once no background compression runs (benchmarks start a first-asked request after it, as after a restart). */
export async function compressionIdle(): Promise<void> {
  while (draining) await draining;
}

const queued = new WeakSet<Piece>();

export class Piece {
  private crcValue: number | undefined;
  private deflatedValue: Buffer | undefined;

  constructor(readonly raw: Buffer) {}

  get crc(): number {
    return (this.crcValue ??= zlib.crc32(this.raw));
  }

  /** Makes its compressed form now; whether it was not made before. */
  compress(): boolean {
    if (this.deflatedValue !== undefined) return false;
    this.deflatedValue = zlib.deflateRawSync(this.raw, DEFLATE);
    return true;
  }

  /** Makes its compressed form on zlib's threads; whether it was not made before. */
  async compressSoon(): Promise<boolean> {
    if (this.deflatedValue !== undefined) return false;
    const made = await deflateRaw(this.raw, DEFLATE);
    if (this.deflatedValue !== undefined) return false;
    this.deflatedValue = made;
    return true;
  }

  /** Its deflate stream as it is now: compressed once made, else stored blocks. */
  streamNow(): Buffer[] {
    return this.deflatedValue !== undefined ? [this.deflatedValue] : storedBlocks(this.raw);
  }

  get isDeflated(): boolean {
    return this.deflatedValue !== undefined;
  }

  /** Bytes held: raw and, once made, compressed. */
  get bytes(): number {
    return this.raw.length + (this.deflatedValue?.length ?? 0);
  }
}

/** Pieces of punctuation, shared, compressed from the start. */
export const [OPEN, COMMA, CLOSE] = ['[', ',', ']'].map((t) => {
  const p = new Piece(Buffer.from(t));
  p.compress();
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

/** Whether the client takes gzip (over the text as it is). */
export function wantsGzip(ctx: Context): boolean {
  return ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
}

/** The share of the pieces' text already compressed. */
function compressedShare(pieces: readonly Piece[]): number {
  let all = 0;
  let done = 0;
  for (const p of pieces) {
    all += p.raw.length;
    if (p.isDeflated) done += p.raw.length;
  }
  return all === 0 ? 1 : done / all;
}

/**
 * Sends the pieces: gzipped when `gzip` (wantsGzip) and at least half of the text is
 * compressed already, else as it is (stored blocks and their CRCs would cost the first
 * answer time and save no byte). Never through the compression middleware, which would
 * compress all of it again, and not as a stream: every buffer is handed to the socket at
 * once (corked: one writev, libuv writing on as the client reads), none copied. The pieces
 * are kept between requests anyway, so holding them until sent costs no memory, where
 * gathering a month's 30,000 pieces into chunks cost a copy of all of it per request.
 */
export function sendPieces(ctx: Context, pieces: readonly Piece[], gzip: boolean, type = 'application/json'): void {
  ctx.type = type;
  ctx.vary('Accept-Encoding');
  const zipped = gzip && compressedShare(pieces) >= 0.5;
  if (zipped) ctx.set('Content-Encoding', 'gzip');
  const buffers = zipped ? gzipBuffers(pieces) : rawBuffers(pieces);
  ctx.status = 200;
  ctx.length = buffers.reduce((n, b) => n + b.length, 0);
  ctx.respond = false;
  const res = ctx.res;
  res.cork();
  for (const b of buffers) res.write(b);
  res.end();
}
