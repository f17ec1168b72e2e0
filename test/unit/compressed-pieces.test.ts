// An answer's pieces as one gzip member made of each piece's own deflate stream
// (api/http/compressed-pieces.ts): what a client decompresses is the pieces' text, in
// order, its CRC and length checked by the decompressor.
import { expect } from 'chai';
import zlib from 'node:zlib';
import { COMMA, compressInBackground, compressionIdle, crc32Combine, gzipChunks, Piece, rawChunks } from '../../api/http/compressed-pieces.ts';
import { rng } from '../../ingest/synthetic/market.ts';

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
    const gz = Buffer.concat(gzipChunks(pieces));
    expect(zlib.gunzipSync(gz).equals(joined)).to.equal(true);
    expect(Buffer.concat(rawChunks(pieces)).equals(joined)).to.equal(true);
    // Sent again from the kept compressed forms: the same bytes.
    expect(Buffer.concat(gzipChunks(pieces)).equals(gz)).to.equal(true);
    expect(gz.length).to.be.lessThan(joined.length);
  });

  it('sends pieces not compressed yet as stored blocks, and compresses them in the background', async () => {
    const pieces = [new Piece(text(2000)), COMMA, new Piece(Buffer.alloc(70_000, 'x')), COMMA, new Piece(text(1))];
    const joined = Buffer.concat(pieces.map((p) => p.raw));
    const stored = Buffer.concat(gzipChunks(pieces));
    expect(zlib.gunzipSync(stored).equals(joined)).to.equal(true);
    expect(stored.length).to.be.greaterThan(joined.length);
    let done = 0;
    await new Promise<void>((resolve) => compressInBackground(pieces, () => true, () => resolve(void done++)));
    expect(done).to.equal(1);
    expect(pieces.every((p) => p.isDeflated)).to.equal(true);
    const compressed = Buffer.concat(gzipChunks(pieces));
    expect(zlib.gunzipSync(compressed).equals(joined)).to.equal(true);
    expect(compressed.length).to.be.lessThan(joined.length / 2);
    compressInBackground(pieces, () => true, () => done++);
    expect(done).to.equal(1);
    // Pieces no longer kept are left as they are.
    const dropped = [new Piece(text(10)), new Piece(text(10))];
    compressInBackground(dropped, () => false, () => done++);
    await compressionIdle();
    expect(dropped.some((p) => p.isDeflated)).to.equal(false);
    expect(done).to.equal(1);
  });

  it('holds an empty answer and pieces over a chunk', () => {
    expect(zlib.gunzipSync(Buffer.concat(gzipChunks([]))).length).to.equal(0);
    const big = [new Piece(text(30_000)), COMMA, new Piece(text(30_000))];
    const chunks = gzipChunks(big);
    expect(zlib.gunzipSync(Buffer.concat(chunks)).equals(Buffer.concat(big.map((p) => p.raw)))).to.equal(true);
    expect(rawChunks(big).length).to.be.greaterThan(1);
  });

  it('sends a large piece as it is, small ones around it gathered in order', () => {
    const large = text(3000);
    const pieces = [new Piece(Buffer.from('[')), new Piece(text(1)), COMMA, new Piece(large), COMMA, new Piece(text(1)), new Piece(Buffer.from(']'))];
    expect(large.length).to.be.greaterThan(65_536);
    const chunks = rawChunks(pieces);
    expect(Buffer.concat(chunks).equals(Buffer.concat(pieces.map((p) => p.raw)))).to.equal(true);
    expect(chunks.length).to.equal(3);
    // Not copied.
    expect(chunks[1]!.buffer).to.equal(large.buffer);
  });
});
