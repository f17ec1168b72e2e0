// A number's JSON text to 15 significant digits, written straight into bytes. The
// market-maker answers are millions of numbers; V8's shortest round-trip text (JSON.stringify)
// and the string it allocates are most of their time. 15 digits are what a double holds
// exactly (DBL_DIG); the two after them are the noise of float sums, whose order the engine
// varies between runs anyway.
//
// What is written is exactly `jsonNumberText(v)`: the shortest text of the double nearest to
// v rounded to 15 significant digits (half away from zero, as toPrecision), in
// JSON.stringify's notation; null for a value that is not finite. The common range
// (1e-6 <= |v| < 1e20) is computed here, the rest through toPrecision.

/**
 * The room a write needs from its position: the longest text (a sign, 15 digits, a point
 * and 6 zeros, or an exponent form), and the bytes past a text that its digits' last word
 * may cover (which the next write covers in turn).
 */
export const JSON_NUMBER_MAX_BYTES = 32;

/** The reference: what writeJsonNumber writes, as a string. */
export function jsonNumberText(v: number): string {
  if (!Number.isFinite(v)) return 'null';
  const rounded = Number(v.toPrecision(15));
  // Rounding the largest doubles to 15 digits overflows: those are written as they are.
  return JSON.stringify(Number.isFinite(rounded) ? rounded : v);
}

// Parsed, not 10 ** i: Math.pow need not be exact, and these must be.
const POW10 = Float64Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));
// Each power of ten split into halves of 26 bits, so that products with them are exact in two doubles.
const SPLIT = 134217729; // 2^27 + 1
const POW10_HI = POW10.map((p) => {
  const c = SPLIT * p;
  return c - (c - p);
});
const POW10_LO = POW10.map((p, i) => p - POW10_HI[i]!);
/** 10^-6 .. 10^20, to find a value's decimal exponent by bisection. */
const E_MIN = -6;
const BOUNDS = Float64Array.from({ length: 27 }, (_, i) => Number(`1e${i + E_MIN}`));
const digits = new Uint8Array(32);
const DIGITS = new DataView(digits.buffer);
/** Two digits' ASCII codes per number 0..99, as a big-endian 16-bit word. */
const PAIRS = Uint16Array.from({ length: 100 }, (_, i) => ((48 + Math.floor(i / 10)) << 8) | (48 + (i % 10)));
/** "0000" and "0.00" as words to store (big-endian: the first byte first). */
const ZEROS = 0x30303030;
const ZERO_POINT = 0x302e3030;

/** Copies 16 bytes of the digits from `from` to out[at]. */
function copyDigits(out: DataView, at: number, from: number): void {
  out.setUint32(at, DIGITS.getUint32(from));
  out.setUint32(at + 4, DIGITS.getUint32(from + 4));
  out.setUint32(at + 8, DIGITS.getUint32(from + 8));
  out.setUint32(at + 12, DIGITS.getUint32(from + 12));
}

function writeAscii(buf: Uint8Array, pos: number, s: string): number {
  for (let i = 0; i < s.length; i++) buf[pos++] = s.charCodeAt(i);
  return pos;
}

/**
 * Writes `pairs` pairs of v's last digits into `digits`, the last pair at [at, at + 1],
 * the others before it; returns what is left of v. In 32-bit integers (v below 10^8),
 * which V8 divides far faster than doubles.
 */
function twoDigitsAt(v: number, at: number, pairs: number): number {
  let rest = v | 0;
  for (let i = at; i > at - 2 * pairs; i -= 2) {
    const q = (rest / 100) | 0;
    DIGITS.setUint16(i, PAIRS[rest - q * 100]!);
    rest = q;
  }
  return rest;
}

/**
 * Writes v's JSON text at buf[pos] (JSON_NUMBER_MAX_BYTES of room needed); returns the
 * position after it. `view`: a DataView of buf's bytes, from the same start, that a caller
 * writing many numbers keeps (one made for each number costs more than writing it).
 */
export function writeJsonNumber(buf: Uint8Array, pos: number, v: number, view?: DataView): number {
  if (v === 0) {
    buf[pos] = 48; // -0 too, as JSON.stringify
    return pos + 1;
  }
  const a = v < 0 ? -v : v;
  if (!(a >= 1e-6 && a < 1e20)) return writeAscii(buf, pos, jsonNumberText(v));
  // e: 10^e <= a < 10^(e+1).
  let lo = 0;
  let hi = BOUNDS.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (BOUNDS[mid]! <= a) lo = mid;
    else hi = mid - 1;
  }
  let e = lo + E_MIN;
  // m: a x 10^(14-e) rounded to an integer of 15 digits. Math.round rounds the rounded
  // product p, not the exact one; halves are doubles at this size, so rounding the product
  // can only have moved it onto a half (which Math.round takes up), never across one.
  const k = 14 - e;
  let p: number;
  let m: number;
  if (k >= 0) {
    p = a * POW10[k]!;
    m = Math.round(p);
    if (p - m === -0.5) {
      // a x 10^k = p + err exactly (Dekker's product of the two split in halves).
      const c = SPLIT * a;
      const ah = c - (c - a);
      const al = a - ah;
      const bh = POW10_HI[k]!;
      const bl = POW10_LO[k]!;
      if (ah * bh - p + ah * bl + al * bh + al * bl < 0) m -= 1;
    }
  } else {
    const d = POW10[-k]!;
    p = a / d;
    m = Math.round(p);
    if (p - m === -0.5) {
      // a / d is below p when a is below p x d = prod + prodErr exactly.
      const c = SPLIT * p;
      const ph = c - (c - p);
      const pl = p - ph;
      const bh = POW10_HI[-k]!;
      const bl = POW10_LO[-k]!;
      const prod = p * d;
      if (a - prod - (ph * bh - prod + ph * bl + pl * bh + pl * bl) < 0) m -= 1;
    }
  }
  if (m >= 1e15) {
    m = 1e14;
    e += 1;
    if (e >= 21) return writeAscii(buf, pos, jsonNumberText(v));
  }
  if (m < 1e14) return writeAscii(buf, pos, jsonNumberText(v));
  // The 15 digits, two at a time: 7 from the high part, 8 from the low.
  const h = Math.floor(m / 1e8);
  twoDigitsAt(m - h * 1e8, 13, 4);
  digits[0] = 48 + twoDigitsAt(h, 5, 3);
  let n = 15;
  while (digits[n - 1] === 48) n--;
  if (v < 0) buf[pos++] = 45;
  // The digits copied four words at a time, wherever the text ends (the room asked for
  // covers the bytes past it): byte loops of a length that varies cost more.
  const out = view ?? new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (e >= 0 && n > e + 1) {
    copyDigits(out, pos, 0);
    out.setUint8(pos + e + 1, 46);
    copyDigits(out, pos + e + 2, e + 1);
    return pos + n + 1;
  }
  if (e >= 0) {
    copyDigits(out, pos, 0);
    for (let i = pos + n; i <= pos + e; i++) buf[i] = 48;
    return pos + e + 1;
  }
  out.setUint32(pos, ZERO_POINT);
  out.setUint32(pos + 4, ZEROS);
  copyDigits(out, pos + 1 - e, 0);
  return pos + 1 - e + n;
}
