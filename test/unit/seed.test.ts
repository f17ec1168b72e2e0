import { expect } from 'chai';
import { seededRandom } from '../support/seed.ts';

describe('the kill tests\' seeded random', () => {
  it('draws the same sequence for the same TEST_SEED, in [0, 1)', () => {
    const before = process.env.TEST_SEED;
    try {
      process.env.TEST_SEED = '12345';
      const a = seededRandom('unit');
      const b = seededRandom('unit');
      const xs = Array.from({ length: 100 }, () => a());
      expect(Array.from({ length: 100 }, () => b())).to.deep.equal(xs);
      expect(xs.every((x) => x >= 0 && x < 1)).to.equal(true);
      expect(new Set(xs).size).to.equal(100);
      process.env.TEST_SEED = '12346';
      expect(seededRandom('unit')()).to.not.equal(xs[0]);
    } finally {
      if (before === undefined) delete process.env.TEST_SEED;
      else process.env.TEST_SEED = before;
    }
  });
});
