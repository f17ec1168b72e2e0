// Answers over 1 kB go compressed when the client accepts it, and only then.
import { expect } from 'chai';
import http from 'node:http';
import zlib from 'node:zlib';
import { testStack } from '../support/stack.ts';

function get(path: string, acceptEncoding?: string): Promise<{ encoding: string | undefined; body: Buffer }> {
  const url = new URL(path, testStack().url);
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: acceptEncoding ? { 'Accept-Encoding': acceptEncoding } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describe('compressed answers', () => {
  it('brotli or gzip as the client asks, the same bytes once decoded; plain without', async () => {
    const plain = await get('/openapi.yaml');
    expect(plain.encoding).to.equal(undefined);
    const br = await get('/openapi.yaml', 'br');
    expect(br.encoding).to.equal('br');
    expect(zlib.brotliDecompressSync(br.body).equals(plain.body)).to.equal(true);
    expect(br.body.length).to.be.lessThan(plain.body.length / 4);
    const gzip = await get('/openapi.yaml', 'gzip');
    expect(gzip.encoding).to.equal('gzip');
    expect(zlib.gunzipSync(gzip.body).equals(plain.body)).to.equal(true);
  });

  it('a small answer goes as it is', async () => {
    const r = await get('/v1/session/', 'gzip, br');
    expect(r.encoding).to.equal(undefined);
    expect(JSON.parse(r.body.toString())).to.have.property('detail');
  });
});
