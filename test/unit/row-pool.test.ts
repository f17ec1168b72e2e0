// Rows of numbers in one growing array (lib/row-pool.ts): offsets stay valid as it grows.
import { expect } from 'chai';
import { RowPool } from '../../lib/row-pool.ts';

describe('row pool', () => {
  it('adds rows of NaN and copies, growing past its first size with every row kept', () => {
    const pool = new RowPool(3, 1);
    const offsets = [pool.add(), pool.add(), pool.add()];
    expect(offsets).to.deep.equal([0, 3, 6]);
    expect([...pool.data.subarray(0, 9)].every(Number.isNaN)).to.equal(true);
    pool.data.set([1, 2, 3], offsets[1]);
    const copied = pool.copy(Float64Array.from([9, 9, 4, 5, 6]), 2);
    expect(copied).to.equal(9);
    expect([...pool.data.subarray(3, 6)]).to.deep.equal([1, 2, 3]);
    expect([...pool.data.subarray(9, 12)]).to.deep.equal([4, 5, 6]);
    expect(pool.data.length).to.be.at.least(12);
  });
});
