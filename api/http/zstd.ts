// Zstandard frames for answers sent as pieces (compressed-pieces.ts). Frames one after the
// other are one valid zstd stream, so each piece is a frame of its own, compressed once.
// Clients decode zstd several times faster than gzip (curl, Chromium, Firefox accept it):
// for a month of market-maker rows, decoding is most of a repeated read's time.
//
// Node 22.15 and newer compress on zlib's threads; older Node in one helper thread running
// zstd built to WebAssembly (@hpcc-js/wasm-zstd), started at the first need, sent pieces
// in batches (a message per piece cost more than compressing it).
import zlib from 'node:zlib';
import { HelperThread } from '../../lib/helper-thread.ts';

/** One of zstd's fast levels: literals left uncompressed decode as copies, sooner than level 1's output, for a third more bytes (docs/benchmarks.md). */
export const ZSTD_LEVEL = -1;

const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
/** Raw blocks of at most 128 KiB, the most a block holds; the window descriptor says as much. */
const RAW_BLOCK = 1 << 17;

/**
 * Bytes as they are, as one zstd frame of raw blocks: a piece not compressed yet, or
 * punctuation (for a byte, a frame of its own is the least a decoder does).
 */
export function rawFrame(raw: Uint8Array): Buffer[] {
  // Frame header: descriptor 0 (no content size, no checksum, no dictionary), window 2^17.
  const out: Buffer[] = [Buffer.from([...MAGIC, 0x00, (17 - 10) << 3])];
  let at = 0;
  do {
    const n = Math.min(RAW_BLOCK, raw.length - at);
    const last = at + n >= raw.length ? 1 : 0;
    const head = Buffer.alloc(3);
    // Block header: last-block bit, type 0 (raw), size.
    head.writeUIntLE(last | (n << 3), 0, 3);
    out.push(head, Buffer.from(raw.buffer, raw.byteOffset + at, n));
    at += n;
  } while (at < raw.length);
  return out;
}

type NativeZstd = (buf: Buffer, opts: { params: Record<number, number> }, cb: (err: Error | null, out: Buffer) => void) => void;
const native = (zlib as unknown as { zstdCompress?: NativeZstd }).zstdCompress;
const LEVEL_PARAM = (zlib.constants as unknown as Record<string, number>).ZSTD_c_compressionLevel;

function compressNative(fn: NativeZstd, raw: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => fn(raw, { params: { [LEVEL_PARAM!]: ZSTD_LEVEL } }, (err, out) => (err ? reject(err) : resolve(out))));
}

export interface ZstdBatch {
  /** The texts one after the other. */
  bytes: Uint8Array;
  /** Where each text ends in `bytes`. */
  ends: Uint32Array;
}

const ENTRY = new URL('./zstd-thread.mjs', import.meta.url);

/** Each text as a frame in the helper thread, sent and answered as one batch. */
async function compressInThread(thread: HelperThread<ZstdBatch, ZstdBatch>, raws: readonly Uint8Array[]): Promise<Buffer[]> {
  const ends = new Uint32Array(raws.length);
  const bytes = new Uint8Array(raws.reduce((n, r) => n + r.length, 0));
  let at = 0;
  raws.forEach((r, i) => {
    bytes.set(r, at);
    ends[i] = at += r.length;
  });
  const r = await thread.call({ bytes, ends }, [bytes.buffer, ends.buffer]);
  const frames: Buffer[] = [];
  let from = 0;
  for (const end of r.ends) {
    frames.push(Buffer.from(r.bytes.buffer, r.bytes.byteOffset + from, end - from));
    from = end;
  }
  return frames;
}

let thread: HelperThread<ZstdBatch, ZstdBatch> | undefined;

/** Each text as one zstd frame, in order; `viaThread` forces the helper thread (tests of older Node's path). */
export async function zstdFrames(raws: readonly Buffer[], viaThread = false): Promise<Buffer[]> {
  if (native && LEVEL_PARAM !== undefined && !viaThread) {
    const out: Buffer[] = [];
    for (const r of raws) out.push(await compressNative(native, r));
    return out;
  }
  return compressInThread((thread ??= new HelperThread(ENTRY, 'zstd thread')), raws);
}
