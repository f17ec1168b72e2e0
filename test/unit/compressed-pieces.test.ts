// An answer's pieces as one gzip member made of each piece's own deflate stream, or as
// zstd frames one after the other (api/http/compressed-pieces.ts): what a client
// decompresses is the pieces' text, in order, a gzip CRC and length checked by the
// decompressor.
import { expect } from 'chai';
import zlib from 'node:zlib';
import { Zstd } from '@hpcc-js/wasm-zstd';
import { CLOSE, COMMA, OPEN, compressInBackground, compressRunsInBackground, compressionIdle, crc32Combine, gzipBuffers, Piece, rawBuffers, zstdBuffers } from '../../api/http/compressed-pieces.ts';
import { rawFrame, zstdFrames } from '../../api/http/zstd.ts';
import { rng } from '../../ingest/synthetic/market.ts';

type Unzstd = (b: Buffer) => Buffer;
/** Node's own zstd decoder where it has one (22.15 and newer), besides the WebAssembly one. */
const nativeUnzstd = (zlib as unknown as { zstdDecompressSync?: Unzstd }).zstdDecompressSync;

describe('compressed pieces', () => {
  const random = rng(7);
  const text = (n: number) => Buffer.from(Array.from({ length: n }, () => `{"v":${random() * 1e6},"k":"${Math.floor(random() * 1e4)}"}`).join(','));

  it('combines CRC-32s as the CRC of the bytes joined', () => {
    for (const [a, b] of [
      [text(3), text(1)],
      [Buffer.alloc(0), text(2)],
      [text(40), Buffer.from(',')],
      [text(1), text(5000)],
    ] as const) {
      expect(crc32Combine(zlib.crc32(a), zlib.crc32(b), b.length)).to.equal(zlib.crc32(Buffer.concat([a, b])));
    }
  });

  it('gunzips to the pieces joined, whichever pieces were compressed before', () => {
    const pieces = [new Piece(Buffer.from('[')), new Piece(text(2)), COMMA, new Piece(Buffer.alloc(0)), new Piece(text(3000)), COMMA, new Piece(text(1)), new Piece(Buffer.from(']'))];
    pieces[4]!.compress();
    const joined = Buffer.concat(pieces.map((p) => p.raw));
    const gz = Buffer.concat(gzipBuffers(pieces));
    expect(zlib.gunzipSync(gz).equals(joined)).to.equal(true);
    expect(Buffer.concat(rawBuffers(pieces)).equals(joined)).to.equal(true);
    // Sent again from the kept compressed forms: the same bytes.
    expect(Buffer.concat(gzipBuffers(pieces)).equals(gz)).to.equal(true);
    expect(gz.length).to.be.lessThan(joined.length);
  });

  it('sends pieces not compressed yet as stored blocks, and compresses them in the background', async () => {
    const pieces = [new Piece(text(2000)), COMMA, new Piece(Buffer.alloc(70_000, 'x')), COMMA, new Piece(text(1))];
    const joined = Buffer.concat(pieces.map((p) => p.raw));
    const stored = Buffer.concat(gzipBuffers(pieces));
    expect(zlib.gunzipSync(stored).equals(joined)).to.equal(true);
    expect(stored.length).to.be.greaterThan(joined.length);
    let done = 0;
    await new Promise<void>((resolve) => compressInBackground(pieces, 'gzip', () => true, () => resolve(void done++)));
    expect(done).to.equal(1);
    expect(pieces.every((p) => p.isCompressed('gzip'))).to.equal(true);
    const compressed = Buffer.concat(gzipBuffers(pieces));
    expect(zlib.gunzipSync(compressed).equals(joined)).to.equal(true);
    expect(compressed.length).to.be.lessThan(joined.length / 2);
    compressInBackground(pieces, 'gzip', () => true, () => done++);
    expect(done).to.equal(1);
    // Pieces no longer kept are left as they are.
    const dropped = [new Piece(text(10)), new Piece(text(10))];
    compressInBackground(dropped, 'gzip', () => false, () => done++);
    await compressionIdle();
    expect(dropped.some((p) => p.isCompressed('gzip'))).to.equal(false);
    expect(done).to.equal(1);
  });

  it('holds an empty answer and large pieces', () => {
    expect(zlib.gunzipSync(Buffer.concat(gzipBuffers([]))).length).to.equal(0);
    const big = [new Piece(text(30_000)), COMMA, new Piece(text(30_000))];
    expect(zlib.gunzipSync(Buffer.concat(gzipBuffers(big))).equals(Buffer.concat(big.map((p) => p.raw)))).to.equal(true);
  });

  it('sends the pieces as they are, in order, none copied, empty ones left out', () => {
    const large = text(3000);
    const pieces = [new Piece(Buffer.from('[')), new Piece(text(1)), new Piece(Buffer.alloc(0)), COMMA, new Piece(large), COMMA, new Piece(text(1)), new Piece(Buffer.from(']'))];
    const buffers = rawBuffers(pieces);
    expect(Buffer.concat(buffers).equals(Buffer.concat(pieces.map((p) => p.raw)))).to.equal(true);
    expect(buffers.length).to.equal(7);
    expect(buffers[3]!.buffer).to.equal(large.buffer);
  });

  it('sends pieces that lie one after the other in one text, a comma between, as one view of it', () => {
    // Three groups written into one buffer, each followed by a comma (as row-text.ts writes them).
    const written = Buffer.from('{"a":1},{"b":2},{"c":3},');
    const view = (from: number, to: number) => new Piece(written.subarray(from, to));
    const pieces = [new Piece(Buffer.from('[')), view(0, 7), COMMA, view(8, 15), COMMA, view(16, 23), COMMA, new Piece(text(2)), new Piece(Buffer.from(']'))];
    const buffers = rawBuffers(pieces);
    expect(Buffer.concat(buffers).toString()).to.equal(Buffer.concat(pieces.map((p) => p.raw)).toString());
    expect(buffers.map((b) => b.length)).to.deep.equal([1, 23, 1, pieces[7]!.raw.length, 1]);
    expect(buffers[1]!.buffer).to.equal(written.buffer);
    // A byte between that is not the comma keeps them apart.
    const other = Buffer.from('{"a":1};{"b":2}');
    const apart = rawBuffers([new Piece(other.subarray(0, 7)), COMMA, new Piece(other.subarray(8))]);
    expect(Buffer.concat(apart).toString()).to.equal('{"a":1},{"b":2}');
    expect(apart.length).to.equal(3);
  });

  describe('as zstd frames', () => {
    let unzstd: Unzstd[] = [];
    before(async () => {
      const wasm = await Zstd.load();
      unzstd = [(b) => Buffer.from(wasm.decompress(b)), ...(nativeUnzstd ? [nativeUnzstd] : [])];
    });
    const decodesTo = (frames: Buffer[], text: Buffer) => {
      for (const d of unzstd) expect(d(Buffer.concat(frames)).equals(text)).to.equal(true);
    };

    it('frames text as raw blocks, empty and over a block too', () => {
      for (const t of [Buffer.alloc(0), Buffer.from(','), text(2), Buffer.alloc(300_000, 'x'), Buffer.alloc(1 << 17, 'y')]) decodesTo(rawFrame(t), t);
    });

    it('compresses each text into a frame of its own, on the zlib of Node or in the helper thread', async () => {
      const texts = [text(1), Buffer.alloc(0), text(3000), Buffer.alloc(200_000, 'z')];
      for (const viaThread of [false, true]) {
        const frames = await zstdFrames(texts, viaThread);
        expect(frames.length).to.equal(texts.length);
        frames.forEach((f, i) => decodesTo([f], texts[i]!));
        expect(frames[2]!.length).to.be.lessThan(texts[2]!.length * 0.75);
      }
    });

    it('decodes to the pieces joined, whichever were compressed, a compressed piece after a comma sent with it as one buffer', async () => {
      const pieces = [OPEN, new Piece(text(2)), COMMA, new Piece(Buffer.alloc(0)), new Piece(text(3000)), COMMA, new Piece(text(40)), COMMA, COMMA, new Piece(text(1)), CLOSE];
      const joined = Buffer.concat(pieces.map((p) => p.raw));
      const plain = zstdBuffers(pieces);
      decodesTo(plain, joined);
      expect(Buffer.concat(plain).length).to.be.greaterThan(joined.length);
      let done = 0;
      await new Promise<void>((resolve) => compressInBackground(pieces, 'zstd', () => true, () => resolve(void done++)));
      expect(done).to.equal(1);
      expect(pieces.filter((p) => p.raw.length > 0).every((p) => p.isCompressed('zstd'))).to.equal(true);
      // The gzip forms are another matter: not made.
      expect(pieces[4]!.isCompressed('gzip')).to.equal(false);
      const compressed = zstdBuffers(pieces);
      decodesTo(compressed, joined);
      expect(Buffer.concat(compressed).length).to.be.lessThan(joined.length * 0.75);
      // "[", the first piece, then each piece with the comma before it, the doubled comma, the last piece with its comma, "]".
      expect(compressed.length).to.equal(7);
    });

    it('sends a run compressed as one frame for those pieces only, in their order, and counts what went compressed', async () => {
      const days = Array.from({ length: 5 }, () => new Piece(text(30)));
      const open = new Piece(text(3));
      const answer = (list: Piece[]) => [OPEN, ...list.flatMap((p, i) => (i === 0 ? [p] : [COMMA, p])), CLOSE];
      const run = days.slice(1);
      await new Promise<void>((resolve) => compressRunsInBackground([run, [open]], () => true, resolve));
      // A run of one piece is not one: nothing else was compressed.
      expect(open.isCompressed('zstd')).to.equal(false);
      expect(days[1]!.hasRun(run)).to.equal(true);
      expect(days.some((p) => p.isCompressed('zstd'))).to.equal(false);
      const counted = { all: 0, compressed: 0 };
      const pieces = answer([...days, open]);
      const frames = zstdBuffers(pieces, counted);
      decodesTo(frames, Buffer.concat(pieces.map((p) => p.raw)));
      const runText = Buffer.concat(run.flatMap((p, i) => (i === 0 ? [p.raw] : [COMMA.raw, p.raw])));
      // Compressed: all but the first and the open day.
      const all = Buffer.concat(pieces.map((p) => p.raw)).length;
      expect(counted).to.deep.equal({ all, compressed: all - days[0]!.raw.length - open.raw.length });
      // The run goes as one buffer, with the comma before it.
      const withComma = Buffer.concat([COMMA.raw, runText]);
      const isRun = (f: Buffer) => {
        try {
          return unzstd[0]!(f).equals(withComma);
        } catch {
          return false; // a part of a piece's frame (raw frames are headers and blocks)
        }
      };
      expect(frames.filter(isRun).map((f) => f.length < runText.length * 0.75)).to.deep.equal([true]);
      // Another piece in its place, a piece missing, or another order: each piece framed alone.
      for (const other of [[days[1]!, days[2]!, new Piece(days[3]!.raw), days[4]!], [days[1]!, days[2]!, days[4]!], [days[1]!, days[3]!, days[2]!, days[4]!]]) {
        const c = { all: 0, compressed: 0 };
        const list = answer(other);
        decodesTo(zstdBuffers(list, c), Buffer.concat(list.map((p) => p.raw)));
        expect(c.compressed).to.equal(c.all - Buffer.concat(other.map((p) => p.raw)).length);
      }
      // Pieces compressed alone are still sent alone outside the run.
      await new Promise<void>((resolve) => compressInBackground([days[2]!], 'zstd', () => true, resolve));
      const c = { all: 0, compressed: 0 };
      const list = answer([days[2]!, days[3]!]);
      decodesTo(zstdBuffers(list, c), Buffer.concat(list.map((p) => p.raw)));
      expect(c.compressed).to.equal(c.all - days[3]!.raw.length);
    });
  });
});
