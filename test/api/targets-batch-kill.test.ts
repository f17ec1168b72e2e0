// A target batch is all or nothing also across a crash (addendum section 6; docs/targets.md):
// a service killed with SIGKILL while it applies a batch that deletes the previous batch's
// 1,500 targets and creates 1,500 new ones holds, after a restart, either the whole old set
// or the whole new one, never a mix or a part.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GB_METRICS } from '../../domain/market/facts.ts';
import { TARGET_SESSIONS } from '../../domain/targets/facts.ts';
import { call, world } from '../support/helpers.ts';
import { opsToken, startChild, stopChild, type Child } from '../support/child-service.ts';
import { seededRandom } from '../support/seed.ts';

describe('a target batch killed mid-way', function () {
  const random = seededRandom('target batch kills');
  this.timeout(600_000);
  const w = world();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-batch-kill-'));
  const prefix = `bk${Date.now().toString(36)}.`;
  const spot = `${w.asset}/USDT`;
  const N = 1_500;
  // Each round restarts a service (about 20 s): three keep the suite's time in bounds.
  const ROUNDS = 3;
  const children: Child[] = [];
  // Distinct keys: every gb metric at every session (all hours included).
  const keys = [null, ...TARGET_SESSIONS].flatMap((market_hours) => GB_METRICS.map((metric) => ({ metric, market_hours }))).slice(0, N);

  after(async () => {
    for (const c of children) await stopChild(c).catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const signIn = async (c: Child) => (await call<{ token: string }>('POST', '/v1/login/', { baseUrl: c.url, json: { email: w.users.owner.email, password: w.password } })).body.token;
  const mine = async (c: Child, token: string) =>
    (await call<{ id: number; threshold: number }[]>('GET', `/v2/organizations/targets/?target_organizations=${w.project}&pairs=${encodeURIComponent(spot)}`, { baseUrl: c.url, token })).body;

  it('leaves the whole old set or the whole new one after each kill', async () => {
    let c = await startChild(tmp, prefix);
    children.push(c);
    const loaded = await call('POST', '/v1/admin/fixtures/', { baseUrl: c.url, authorization: `Ops-Token ${opsToken(c)}`, json: w.fixture });
    expect(loaded.status, loaded.text).to.equal(200);
    let token = await signIn(c);
    let current: { id: number; threshold: number }[] = [];
    const outcomes: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const body = {
        delete_ids: current.map((t) => t.id),
        create_targets: keys.map((k) => ({ organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, ...k, threshold: round })),
      };
      const request = call('POST', '/v2/organizations/targets/batch/', { baseUrl: c.url, token, json: body }).catch(() => undefined);
      // Killed at a random moment of the request: before, during or after its insert.
      await new Promise((r) => setTimeout(r, Math.floor(random() * 600)));
      c.proc.kill('SIGKILL');
      await c.exited;
      const answer = await request;
      c = await startChild(tmp, prefix);
      children.push(c);
      token = await signIn(c);
      const after = await mine(c, token);
      const thresholds = [...new Set(after.map((t) => t.threshold))];
      expect(after, `round ${round}`).to.have.length(current.length === 0 && thresholds.length === 0 ? 0 : N);
      expect(thresholds.length, `round ${round}: thresholds ${thresholds.join(',')}`).to.be.at.most(1);
      const applied = thresholds[0] === round;
      if (answer && answer.status === 201) expect(applied, `round ${round}: answered 201`).to.equal(true);
      if (!applied) expect(after.map((t) => t.id).sort()).to.deep.equal(current.map((t) => t.id).sort());
      outcomes.push(applied ? 'applied' : 'not applied');
      current = after;
    }
    expect(outcomes).to.have.length(ROUNDS);
    process.stderr.write(`[batch kill] rounds: ${outcomes.join(', ')}\n`);
  });
});
