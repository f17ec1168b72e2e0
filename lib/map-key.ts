// A Map key of a few parts. Written as one template, not as a list joined: the market-maker
// reads build one per row of a month, hundreds of thousands per answer. Keys of one Map
// have the same number of parts, so the parts not given (written empty) never make two
// keys equal.

/** The parts, NUL-separated, as one string. */
export const mapKey = (a: string | number, b: string | number, c: string | number = '', d: string | number = '', e: string | number = '', f: string | number = ''): string =>
  `${a}\u0000${b}\u0000${c}\u0000${d}\u0000${e}\u0000${f}`;

/**
 * Values by two keys (a market maker and a pair, a pair and a bucket's start, an exchange
 * and a symbol): a month's rows are looked up without a text made of both for each, a
 * bucket's start written in it.
 */
export class TwoKeyMap<A, B, V> {
  private readonly byFirst = new Map<A, Map<B, V>>();

  constructor(entries: Iterable<[A, B, V]> = []) {
    for (const [a, b, v] of entries) this.set(a, b, v);
  }

  get(a: A, b: B): V | undefined {
    return this.byFirst.get(a)?.get(b);
  }

  set(a: A, b: B, v: V): void {
    let inner = this.byFirst.get(a);
    if (!inner) this.byFirst.set(a, (inner = new Map()));
    inner.set(b, v);
  }

  /** Every value, in the order their first keys and then their second were first set. */
  values(): V[] {
    const out: V[] = [];
    for (const inner of this.byFirst.values()) for (const v of inner.values()) out.push(v);
    return out;
  }
}
