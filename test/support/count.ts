import type { Accumulator } from '../../processors/shell/minute-windows.ts';

/** A minute window's accumulator for tests: how many values and their sum. */
export class Count implements Accumulator<number, { n: number; sum: number }> {
  n = 0;
  sum = 0;
  add(x: number) {
    this.n++;
    this.sum += x;
  }
  row() {
    return { n: this.n, sum: this.sum };
  }
}
