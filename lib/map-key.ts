// A Map key of a few parts. Written as one template, not as a list joined: the market-maker
// reads build one per row of a month, hundreds of thousands per answer. Keys of one Map
// have the same number of parts, so the parts not given (written empty) never make two
// keys equal.

/** The parts, NUL-separated, as one string. */
export const mapKey = (a: string | number, b: string | number, c: string | number = '', d: string | number = '', e: string | number = '', f: string | number = ''): string =>
  `${a}\u0000${b}\u0000${c}\u0000${d}\u0000${e}\u0000${f}`;

/**
 * Values by a key (a mapKey, or an object such as a pair) and a number (a bucket's start, a
 * range): a month's rows are looked up without a text made for each, a number written in it.
 */
export class KeyedByNumber<V, K = string> {
  private readonly byKey = new Map<K, Map<number, V>>();

  get(key: K, n: number): V | undefined {
    return this.byKey.get(key)?.get(n);
  }

  set(key: K, n: number, v: V): void {
    let inner = this.byKey.get(key);
    if (!inner) this.byKey.set(key, (inner = new Map()));
    inner.set(n, v);
  }

  /** Every value, in the order their keys and then their numbers were first set. */
  values(): V[] {
    const out: V[] = [];
    for (const inner of this.byKey.values()) for (const v of inner.values()) out.push(v);
    return out;
  }
}

/** Values by two texts (an exchange and a pair), looked up without a text made of both. */
export class ByTwoTexts<V> {
  private readonly byFirst = new Map<string, Map<string, V>>();

  constructor(entries: Iterable<[string, string, V]> = []) {
    for (const [a, b, v] of entries) this.set(a, b, v);
  }

  get(a: string, b: string): V | undefined {
    return this.byFirst.get(a)?.get(b);
  }

  set(a: string, b: string, v: V): void {
    let inner = this.byFirst.get(a);
    if (!inner) this.byFirst.set(a, (inner = new Map()));
    inner.set(b, v);
  }
}
