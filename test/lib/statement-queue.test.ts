// The line of bound statements (lib/statement-queue.ts): one statement at a time, the most
// urgent waiting one next, arrival order among equals, and a statement that waited long
// enough next whatever its priority; then the same order through the gateway's connections
// on the real engine (the embedded one: a server runs statements side by side).
import { expect } from 'chai';
import { openClickHouse } from '../../lib/clickhouse.ts';
import { silentLogger } from '../../lib/log.ts';
import { StatementQueue, type Turn } from '../../lib/statement-queue.ts';
import { testStack } from '../support/stack.ts';

/** A statement that ends when the test says so, and records when it started. */
function held(started: string[], name: string): { run: () => Promise<string>; end: () => void } {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return {
    run: async () => {
      started.push(name);
      await done;
      return name;
    },
    end: () => end(),
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('StatementQueue', () => {
  it('runs one statement at a time, the most urgent waiting one next, in arrival order among equals', async () => {
    const queue = new StatementQueue({ maxWaitMs: 1000, now: () => 0 });
    const started: string[] = [];
    const s = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((n) => [n, held(started, n)]));
    const results = [
      queue.run(2, s.a!.run),
      queue.run(2, s.b!.run),
      queue.run(3, s.c!.run),
      queue.run(1, s.d!.run),
      queue.run(2, s.e!.run),
    ];
    await turn();
    expect(started).to.deep.equal(['a']);
    expect(queue.length).to.equal(4);
    for (const [name, expected] of [
      ['a', ['a', 'd']],
      ['d', ['a', 'd', 'b']],
      ['b', ['a', 'd', 'b', 'e']],
      ['e', ['a', 'd', 'b', 'e', 'c']],
    ] as const) {
      s[name]!.end();
      await turn();
      expect(started).to.deep.equal(expected);
    }
    s.c!.end();
    expect(await Promise.all(results)).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expect(queue.length).to.equal(0);
  });

  it('lets a statement that has waited maxWaitMs go before more urgent ones', async () => {
    let now = 0;
    const queue = new StatementQueue({ maxWaitMs: 1000, now: () => now });
    const started: string[] = [];
    const a = held(started, 'a');
    const slow = held(started, 'ingest');
    const urgent = held(started, 'request');
    const done = [queue.run(1, a.run), queue.run(2, slow.run)];
    now = 1000; // the ingest statement has waited its bound when the request arrives
    done.push(queue.run(1, urgent.run));
    a.end();
    await turn();
    expect(started).to.deep.equal(['a', 'ingest']);
    slow.end();
    urgent.end();
    await Promise.all(done);
    expect(started).to.deep.equal(['a', 'ingest', 'request']);
  });

  it('passes a failed statement on to its caller and hands the turn on', async () => {
    const queue = new StatementQueue({ maxWaitMs: 1000 });
    const failed = queue.run(1, () => Promise.reject(new Error('engine said no')));
    const next = queue.run(1, async () => 'ran');
    expect(await failed.catch((e: Error) => e.message)).to.equal('engine said no');
    expect(await next).to.equal('ran');
    // A statement that throws before it returns a promise frees the line as well.
    const thrown = queue.run(1, () => {
      throw new Error('refused');
    });
    expect(await thrown.catch((e: Error) => e.message)).to.equal('refused');
    expect(await queue.run(1, async () => 'free')).to.equal('free');
  });

  it('reports each turn to its watchers: priority, wait and hold; a throwing watcher changes nothing', async () => {
    let now = 0;
    const queue = new StatementQueue({ maxWaitMs: 1000, now: () => now });
    const turns: Turn[] = [];
    const stop = queue.watch((t) => turns.push(t));
    queue.watch(() => {
      throw new Error('a broken watcher');
    });
    const started: string[] = [];
    const ingest = held(started, 'ingest');
    const request = held(started, 'request');
    const done = [queue.run(2, ingest.run)];
    now = 10;
    done.push(queue.run(1, request.run));
    now = 250;
    ingest.end();
    await turn();
    now = 290;
    request.end();
    expect(await Promise.all(done)).to.deep.equal(['ingest', 'request']);
    expect(turns).to.deep.equal([
      { priority: 2, waitedMs: 0, heldMs: 250 },
      { priority: 1, waitedMs: 240, heldMs: 40 },
    ]);
    stop();
    await queue.run(1, async () => 'unwatched');
    expect(turns).to.have.length(2);
  });

  it('orders the bound statements of the gateway connections by their priority', async () => {
    const { config } = testStack();
    const ingest = openClickHouse(config, 'queue-ingest', { priority: 2, log: silentLogger });
    const api = openClickHouse(config, 'queue-api', { priority: 1, log: silentLogger });
    try {
      const ended: string[] = [];
      const ask = (ch: typeof api, name: string) => ch.query<{ v: string }>('SELECT {v:String} AS v', { v: name }).then((rows) => ended.push(rows[0]!.v));
      // Asked in one turn: the first holds the line while the others wait for it.
      await Promise.all([ask(ingest, 'ingest-1'), ask(ingest, 'ingest-2'), ask(ingest, 'ingest-3'), ask(api, 'request')]);
      if (config.clickhouseUrl) expect([...ended].sort()).to.deep.equal(['ingest-1', 'ingest-2', 'ingest-3', 'request']);
      else expect(ended).to.deep.equal(['ingest-1', 'request', 'ingest-2', 'ingest-3']);
    } finally {
      await Promise.all([ingest.close(), api.close()]);
    }
  });
});
