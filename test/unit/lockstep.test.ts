// The coordinator of bench:api-scale --interleave: two runs' timed requests one at a time,
// in strict turns, and their barriers kept. Its children here are plain event emitters
// standing in for the IPC channel of a child process.
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { LockstepCoordinator } from '../../bench/lockstep.ts';

class Child extends EventEmitter {
  readonly got: string[] = [];
  constructor(
    private readonly name: string,
    private readonly log: string[],
  ) {
    super();
  }
  send(m: { lockstep: string }): boolean {
    this.got.push(m.lockstep);
    this.log.push(`go ${this.name}`);
    return true;
  }
  ask(m: { lockstep: 'turn' } | { lockstep: 'barrier'; name: string }): void {
    this.emit('message', m);
  }
}

function pair(first: 0 | 1) {
  const log: string[] = [];
  const a = new Child('a', log);
  const b = new Child('b', log);
  const c = new LockstepCoordinator([a as unknown as ChildProcess, b as unknown as ChildProcess], first);
  return { a, b, c, log };
}

/** As pair, both runs past the barrier before their timed requests, the log emptied. */
function timed(first: 0 | 1) {
  const p = pair(first);
  p.a.ask({ lockstep: 'barrier', name: 'timed' });
  p.b.ask({ lockstep: 'barrier', name: 'timed' });
  p.log.length = 0;
  return p;
}

describe('bench lockstep coordinator', () => {
  it('releases a barrier only when both runs have reached it', () => {
    const { a, b, log } = pair(0);
    a.ask({ lockstep: 'barrier', name: 'timed' });
    expect(log).to.deep.equal([]);
    b.ask({ lockstep: 'barrier', name: 'timed' });
    expect(log).to.deep.equal(['go a', 'go b']);
  });

  it('grants turns one at a time, strictly alternating, the first side first whoever asks first', () => {
    const { a, b, log } = timed(1);
    a.ask({ lockstep: 'turn' });
    expect(log, 'a waits for b, who goes first').to.deep.equal([]);
    b.ask({ lockstep: 'turn' });
    expect(log).to.deep.equal(['go b']);
    // b's request ends when b asks again: then a goes, and b waits for a.
    b.ask({ lockstep: 'turn' });
    expect(log).to.deep.equal(['go b', 'go a']);
    a.ask({ lockstep: 'turn' });
    expect(log).to.deep.equal(['go b', 'go a', 'go b']);
  });

  it('lets one run finish its turns alone once the other waits at the next barrier', () => {
    const { a, b, log } = timed(0);
    a.ask({ lockstep: 'turn' });
    b.ask({ lockstep: 'turn' });
    a.ask({ lockstep: 'barrier', name: 'end' }); // a timed one request, b more
    expect(log).to.deep.equal(['go a', 'go b']);
    b.ask({ lockstep: 'turn' });
    expect(log).to.deep.equal(['go a', 'go b', 'go b']);
    b.ask({ lockstep: 'barrier', name: 'end' });
    expect(log).to.deep.equal(['go a', 'go b', 'go b', 'go a', 'go b']);
  });

  it('breaks when the runs reach different barriers, or one ends while the other waits', async () => {
    const one = pair(0);
    one.a.ask({ lockstep: 'barrier', name: 'summary: start' });
    one.b.ask({ lockstep: 'barrier', name: 'leaderboard: start' });
    const e1 = await one.c.broken.catch((e: Error) => e);
    expect(e1.message).to.match(/disagree/);
    expect(one.log).to.deep.equal([]);

    const two = pair(0);
    two.a.ask({ lockstep: 'barrier', name: 'start' });
    two.b.emit('exit', 1);
    const e2 = await two.c.broken.catch((e: Error) => e);
    expect(e2.message).to.match(/ended while run 1 waited at "start"/);
  });
});
