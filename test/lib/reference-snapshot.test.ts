import { expect } from 'chai';
import { ReferenceSnapshot } from '../../lib/repositories/reference.ts';
import { seed, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

describe('reference lists shared by market requests', () => {
  const w = world();
  before(() => seed(w.fixture));

  it('reads once within its age, again after it or after invalidate, and hands out frozen lists', async () => {
    const clock = { t: 1_000_000 };
    const snapshot = new ReferenceSnapshot(testStack().service.deps.reference, 2_000, () => clock.t);
    const first = await snapshot.lists();
    expect(first.pairs.some((p) => p.exchange === w.ex)).to.equal(true);
    clock.t += 1_999;
    expect(await snapshot.lists()).to.equal(first);
    clock.t += 1;
    const second = await snapshot.lists();
    expect(second).to.not.equal(first);
    expect(second.pairs).to.deep.equal(first.pairs);
    snapshot.invalidate();
    expect(await snapshot.lists()).to.not.equal(second);
    expect(() => (second.pairs as unknown[]).push({})).to.throw(TypeError);
    expect(() => Object.assign(second.assets[0]!, { name: 'changed' })).to.throw(TypeError);
  });

  it('the service drops its lists when a fixture is loaded, so a new pair is visible at once', async () => {
    const deps = testStack().service.deps;
    await deps.referenceLists.lists();
    const other = world();
    await seed(other.fixture);
    const { pairs } = await deps.referenceLists.lists();
    expect(pairs.some((p) => p.exchange === other.ex)).to.equal(true);
  });
});
