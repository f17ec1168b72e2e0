// Many short rows of numbers packed in one array (domain/market-makers/reconciliation.ts).

/**
 * Rows of `width` numbers in one growing Float64Array, each found by its offset: a month's
 * reconciliation holds 60,000 wallets' rows, and a typed array each cost an allocation
 * the collector then traced.
 */
export class RowPool {
  data: Float64Array;
  private used = 0;

  constructor(
    readonly width: number,
    rows: number,
  ) {
    this.data = new Float64Array(Math.max(1, rows) * width);
  }

  /** A new row, NaN throughout: its offset. */
  add(): number {
    const at = this.used;
    if (at + this.width > this.data.length) {
      const next = new Float64Array(Math.max(this.data.length * 2, at + this.width));
      next.set(this.data);
      this.data = next;
    }
    this.used += this.width;
    this.data.fill(NaN, at, at + this.width);
    return at;
  }

  /** A new row holding the `width` numbers of `from` at `fromAt`: its offset. */
  copy(from: Float64Array, fromAt: number): number {
    const at = this.add();
    this.data.set(from.subarray(fromAt, fromAt + this.width), at);
    return at;
  }
}
