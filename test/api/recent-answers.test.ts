// RecentAnswers with a clock the test moves: identical requests in flight share one
// computation, a finished answer is shared for less than reuseMs after it began and never
// after, a failure is not kept, and 0 turns sharing off.
import { expect } from 'chai';
import { RecentAnswers, type Answer } from '../../api/market-caches/recent-answers.ts';

const answer = (text: string): Answer => ({ status: 200, type: 'application/json', headers: {}, body: Buffer.from(text) });

/** A computation the test finishes when it likes. */
function deferred() {
  let finish!: (a: Answer) => void;
  let fail!: (e: Error) => void;
  const promise = new Promise<Answer>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { promise, finish, fail };
}

describe('RecentAnswers (shared market answers)', () => {
  it('identical requests in flight share one computation; other keys compute their own', async () => {
    let t = 1_000_000;
    const answers = new RecentAnswers({ reuseMs: 1000, now: () => t });
    const d = deferred();
    let computed = 0;
    const compute = () => {
      computed++;
      return d.promise;
    };
    const asked = [answers.get('a', compute), answers.get('a', compute)];
    t += 500;
    asked.push(answers.get('a', compute));
    const other = answers.get('b', async () => answer('b'));
    expect(computed).to.equal(1);
    d.finish(answer('a'));
    const got = await Promise.all(asked);
    expect(got.map((a) => a.body.toString())).to.deep.equal(['a', 'a', 'a']);
    expect((await other).body.toString()).to.equal('b');
    expect({ shared: answers.shared, computed: answers.computed }).to.deep.equal({ shared: 2, computed: 2 });
  });

  it('shares a finished answer for less than reuseMs after its computation began, then computes anew', async () => {
    let t = 5_000_000;
    const answers = new RecentAnswers({ reuseMs: 1000, now: () => t });
    let n = 0;
    const compute = async () => answer(`v${++n}`);
    expect((await answers.get('k', compute)).body.toString()).to.equal('v1');
    t += 999;
    expect((await answers.get('k', compute)).body.toString()).to.equal('v1');
    t += 1;
    expect((await answers.get('k', compute)).body.toString()).to.equal('v2');
    t += 1;
    expect((await answers.get('k', compute)).body.toString()).to.equal('v2');
    // Old answers are dropped, not only ignored.
    t += 5000;
    await answers.get('other', compute);
    expect(answers.size).to.equal(1);
  });

  it('a computation that fails is shared by those waiting on it, not by the next request', async () => {
    const t = 9_000_000;
    const answers = new RecentAnswers({ reuseMs: 1000, now: () => t });
    const d = deferred();
    const first = answers.get('k', () => d.promise);
    const joined = answers.get('k', () => d.promise);
    d.fail(new Error('engine stopped'));
    for (const p of [first, joined]) expect(await p.catch((e: Error) => e.message)).to.equal('engine stopped');
    expect((await answers.get('k', async () => answer('ok'))).body.toString()).to.equal('ok');
  });

  it('reuseMs 0 computes every request; more than a second is refused', async () => {
    const answers = new RecentAnswers({ reuseMs: 0, now: () => 0 });
    let n = 0;
    const compute = async () => answer(`v${++n}`);
    await answers.get('k', compute);
    expect((await answers.get('k', compute)).body.toString()).to.equal('v2');
    expect(() => new RecentAnswers({ reuseMs: 1001, now: () => 0 })).to.throw(/0\.\.1000/);
  });
});
