// Numbers' JSON text to 15 significant digits (lib/json-number.ts): what is written straight
// into bytes must be exactly the reference text (toPrecision(15), then JSON.stringify), over
// every magnitude, the halves between two 15-digit numbers, and the edges of the notation.
import { expect } from 'chai';
import { JSON_NUMBER_MAX_BYTES, jsonNumberText, writeJsonNumber } from '../../lib/json-number.ts';
import { rng } from '../../ingest/synthetic/market.ts';

// Exactly the room a write asks for: writing past it throws (RangeError) and fails the test.
const buf = new Uint8Array(JSON_NUMBER_MAX_BYTES);
const written = (v: number) => Buffer.from(buf.subarray(0, writeJsonNumber(buf, 0, v))).toString('latin1');

function mismatches(values: Iterable<number>): string[] {
  const out: string[] = [];
  for (const v of values) {
    const got = written(v);
    const want = jsonNumberText(v);
    if (got !== want) out.push(`${v}: ${got} (expected ${want})`);
    if (out.length >= 10) break;
  }
  return out;
}

describe('JSON numbers to 15 digits', () => {
  it('writes the reference text of the notation edges', () => {
    const edges = [0, -0, 1, -1, 0.1, 0.3, 0.1 + 0.2, 1e-6, 9.999999999999999e-7, 1e-7, 1e-300, 5e-324, 1e15, 999999999999999.9, 99999999999999.99,
      1e20, 99999999999999999999, 1e21, 123456789012345680000, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53, 2 ** 53 - 1, 1234567890123455, -1234567890123455, 0.5, 12.5, NaN, Infinity, -Infinity];
    expect(mismatches(edges)).to.deep.equal([]);
    expect(written(0.1 + 0.2)).to.equal('0.3');
    expect(written(-0)).to.equal('0');
    expect(written(NaN)).to.equal('null');
    expect(written(123.456)).to.equal('123.456');
    expect(written(1e-7)).to.equal('1e-7');
  });

  it('writes the reference text of random doubles of every magnitude', () => {
    const random = rng(7);
    const values = function* () {
      for (let i = 0; i < 300_000; i++) {
        const magnitude = 10 ** (random() * 44 - 12);
        const v = random() * magnitude * (random() < 0.3 ? -1 : 1);
        yield v;
        // Few digits, as prices and sizes are.
        yield Math.round(v * 100) / 100;
      }
    };
    expect(mismatches(values())).to.deep.equal([]);
  });

  it('rounds halves between two 15-digit numbers as toPrecision does', () => {
    const random = rng(8);
    const values = function* () {
      for (let i = 0; i < 100_000; i++) {
        // 16-digit integers ending in 5 are exact doubles and exact halves at 15 digits.
        const half = (1e15 + Math.floor(random() * 8e14)) * 10 + 5;
        yield half / 10 ** Math.floor(random() * 30);
        yield Math.floor(random() * 9e15) + 1e15;
      }
    };
    expect(mismatches(values())).to.deep.equal([]);
  });
});
