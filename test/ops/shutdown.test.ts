// A service stopped by SIGTERM while a processor's flush waits on a ClickHouse statement of
// many minutes (MM_FAULTS stall-before-write:1) kills the statement and exits by itself,
// without committing what it did not write: started again, it reads those messages anew
// and ends with every one of them stored.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { topicName } from '../../lib/kafka.ts';
import { opsToken, startChild, stopChild, type Child } from '../support/child-service.ts';
import { call, waitFor, world } from '../support/helpers.ts';
import { generate } from '../support/market-reference.ts';
import { testStack } from '../support/stack.ts';

describe('shutdown during a ClickHouse statement', function () {
  this.timeout(120_000);
  const w = world();
  const prefix = `sd${Date.now().toString(36)}.`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-shutdown-'));
  const pair = `${w.asset}/USDT`;
  const from = Date.UTC(2026, 2, 3, 9, 0);
  const to = Date.UTC(2026, 2, 3, 9, 5);
  const { snaps } = generate(from, to, 10_000, 11);
  const children: Child[] = [];

  after(async () => {
    for (const c of children) await stopChild(c).catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** The spot pair's snapshots counted in the summary of the window, once all are in. */
  async function stored(c: Child, token: string): Promise<number> {
    const q = `assets=${w.asset}&time_start=${new Date(from).toISOString()}&time_end=${new Date(to + 3600_000).toISOString()}`;
    const r = await call<{ pair: string; tick_bps_samples: number }[]>('GET', `/v2/metrics/summary/?${q}`, { baseUrl: c.url, token });
    expect(r.status, r.text).to.equal(200);
    return r.body.find((x) => x.pair === pair)?.tick_bps_samples ?? 0;
  }

  it('kills the statement, exits by itself, and loses no message', async () => {
    const dataDir = path.join(tmp, 'service');
    const stalled = await startChild(dataDir, prefix, 'stall-before-write:1');
    children.push(stalled);
    const r = await call('POST', '/v1/admin/fixtures/', { baseUrl: stalled.url, authorization: `Ops-Token ${opsToken(stalled)}`, json: w.fixture });
    expect(r.status, r.text).to.equal(200);

    const producer = testStack().kafka.producer();
    await producer.connect();
    await producer.send({
      topic: topicName({ topicPrefix: prefix }, 'md.orderbook'),
      messages: snaps.map((s) => ({ key: `${w.ex}:${pair}`, value: JSON.stringify({ exchange: w.ex, pair, ts: s.ts, bids: s.bids, asks: s.asks }) })),
    });
    await producer.disconnect();

    await waitFor('the flush stalled in its statement', async () => stalled.log.join('').includes('fault injection: stalling at before-write #1'));
    stalled.proc.kill('SIGTERM');
    const exit = await stalled.exited;
    // It exited by itself: the statement was killed (a process cannot exit while one runs),
    // and it did not have to kill itself. 0 when the stop finished, 1 when its deadline came
    // first (a slow broker on a loaded machine): either way nothing uncommitted is lost.
    expect(exit.signal, stalled.log.join('')).to.equal(null);
    expect(stalled.log.join('')).to.not.include('still runs after its cancel');

    const again = await startChild(dataDir, prefix);
    children.push(again);
    const login = await call<{ token: string }>('POST', '/v1/login/', { baseUrl: again.url, json: { email: w.users.staff.email, password: w.password } });
    expect(login.status, login.text).to.equal(200);
    await waitFor('every snapshot stored after the restart', async () => (await stored(again, login.body.token)) === snaps.length, 60_000);
  });
});
