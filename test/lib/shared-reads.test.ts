import { expect } from 'chai';
import { SharedReads } from '../../lib/shared-reads.ts';
import { REFERENCE_LIST_TABLES, ReferenceRepository, ReferenceSnapshot } from '../../domain/reference/repository.ts';
import { call, login, seed, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

/**
 * Shared reads (fresh for 100 ms, served up to 1 s) over a read function that records its
 * calls in `pending` and answers when told to, on a clock the test moves.
 */
function setup(maxEntries?: number) {
  const clock = { t: 0 };
  const pending: { key: string; resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  const read = (key: string) => new Promise<string>((resolve, reject) => pending.push({ key, resolve, reject }));
  const shared = new SharedReads(read, { refreshAfterMs: 100, maxAgeMs: 1_000, maxEntries, now: () => clock.t });
  return { clock, pending, shared };
}

/** As setup, with 'k' read once as 'v1' at time 0. */
async function readOnce() {
  const s = setup();
  const first = s.shared.get('k');
  s.pending[0]!.resolve('v1');
  await first;
  return s;
}

const tick = () => new Promise((r) => setImmediate(r));

describe('shared reads (lib/shared-reads.ts)', () => {
  it('serves a value within refreshAfterMs without reading again, and shares a read in flight', async () => {
    const { clock, pending, shared } = setup();
    const a = shared.get('k');
    const b = shared.get('k');
    expect(pending).to.have.length(1);
    pending[0]!.resolve('v1');
    expect(await a).to.equal('v1');
    expect(await b).to.equal('v1');
    clock.t = 99;
    expect(await shared.get('k')).to.equal('v1');
    expect(pending).to.have.length(1);
  });

  it('past refreshAfterMs serves the old value while one background read runs, then the new one', async () => {
    const { clock, pending, shared } = await readOnce();
    clock.t = 100;
    expect(await shared.get('k')).to.equal('v1');
    expect(await shared.get('k')).to.equal('v1');
    expect(pending).to.have.length(2);
    pending[1]!.resolve('v2');
    await tick();
    expect(await shared.get('k')).to.equal('v2');
    expect(pending).to.have.length(2);
  });

  it('past maxAgeMs makes the request wait for a new read', async () => {
    const { clock, pending, shared } = await readOnce();
    clock.t = 1_000;
    const next = shared.get('k');
    expect(pending).to.have.length(2);
    pending[1]!.resolve('v2');
    expect(await next).to.equal('v2');
  });

  it('keeps no failed read: a failed first read is read again, a failed refresh leaves the old value', async () => {
    const { clock, pending, shared } = setup();
    const failed = shared.get('k');
    pending[0]!.reject(new Error('down'));
    expect(await failed.then(() => 'resolved', (e: Error) => e.message)).to.equal('down');
    const second = shared.get('k');
    expect(pending).to.have.length(2);
    pending[1]!.resolve('v1');
    expect(await second).to.equal('v1');
    clock.t = 150;
    expect(await shared.get('k')).to.equal('v1');
    pending[2]!.reject(new Error('down'));
    await tick();
    expect(await shared.get('k')).to.equal('v1');
    // The failed refresh is tried again by the next request.
    expect(pending).to.have.length(4);
  });

  it('invalidate drops values at once and does not keep what a read begun before it returns', async () => {
    const { clock, pending, shared } = await readOnce();
    clock.t = 100;
    await shared.get('k'); // starts a background refresh (pending[1])
    shared.invalidate();
    pending[1]!.resolve('stale');
    await tick();
    const after = shared.get('k');
    expect(pending).to.have.length(3);
    pending[2]!.resolve('v2');
    expect(await after).to.equal('v2');
    shared.invalidate('k');
    void shared.get('k');
    expect(pending).to.have.length(4);
    pending[3]!.resolve('v3');
  });

  it('keeps at most maxEntries keys, dropping the least recently read', async () => {
    const { pending, shared } = setup(2);
    for (const k of ['a', 'b', 'a', 'c']) void shared.get(k); // c drops b, the least recently read
    expect(pending.map((p) => p.key)).to.deep.equal(['a', 'b', 'c']);
    for (const k of ['a', 'b']) void shared.get(k);
    expect(pending.map((p) => p.key)).to.deep.equal(['a', 'b', 'c', 'b']);
    for (const p of pending) p.resolve(p.key);
  });
});

describe('what the service shares between requests', () => {
  const w = world();
  before(() => seed(w.fixture));

  it('reference lists: a fixture load drops them, so a new pair is visible at once', async () => {
    const deps = testStack().service.deps;
    await deps.referenceLists.lists();
    const other = world();
    await seed(other.fixture);
    const { pairs } = await deps.referenceLists.lists();
    expect(pairs.some((p) => p.exchange === other.ex)).to.equal(true);
  });

  it('reference lists: a refresh with nothing written keeps them, reading only their tables\' stamp; a write reads them again', async () => {
    const { ch } = testStack().service.deps;
    // No merge may start between the reads below (a merge changes the stamp): each table in one part.
    for (const table of REFERENCE_LIST_TABLES) await ch.command('OPTIMIZE TABLE {table:Identifier} FINAL', { table });
    let reads = 0;
    const repo = new (class extends ReferenceRepository {
      override pairs() {
        reads++;
        return super.pairs();
      }
    })(ch);
    // Every call a refresh: nothing is served from the shared read itself.
    const snapshot = new ReferenceSnapshot(repo, { refreshAfterMs: 0, maxAgeMs: 0 });
    const first = await snapshot.lists();
    const second = await snapshot.lists();
    expect(second).to.equal(first);
    expect(reads).to.equal(1);
    const other = world();
    await seed(other.fixture);
    const third = await snapshot.lists();
    expect(reads).to.equal(2);
    expect(third).to.not.equal(first);
    expect(third.pairs.some((p) => p.exchange === other.ex)).to.equal(true);
  });

  it('reference lists are frozen: callers share them', async () => {
    const lists = await testStack().service.deps.referenceLists.lists();
    expect(() => (lists.pairs as unknown[]).push({})).to.throw(TypeError);
    expect(() => Object.assign(lists.assets[0]!, { name: 'changed' })).to.throw(TypeError);
  });

  it('users: a fixture load drops them, so a role change applies to the next request of a signed-in user', async () => {
    const token = await login(w.users.loner.email, w.password);
    const before = await call('GET', '/v1/admin/status/', { token });
    expect(before.status).to.equal(403);
    await seed({ ...w.fixture, users: [{ ...w.users.loner, is_staff: true }] });
    const after = await call('GET', '/v1/admin/status/', { token });
    expect(after.status).to.equal(200);
  });
});
