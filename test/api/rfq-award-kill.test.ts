// An RFQ award is all or nothing also across a crash (addendum section 8; docs/rfq.md,
// "Award"): a service killed with SIGKILL during an award holds, after a restart, either
// the RFQ awarded AND its draft loan AND its targets, or none of them. First killed exactly
// between the award's two inserts (the `award-gap` crash point: the targets written, the
// records not), then at random moments of the request.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { call, world } from '../support/helpers.ts';
import { opsToken, startChild, stopChild, type Child } from '../support/child-service.ts';
import { seededRandom } from '../support/seed.ts';

describe('an RFQ award killed mid-way', function () {
  const random = seededRandom('RFQ award kills');
  this.timeout(600_000);
  const w = world();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-award-kill-'));
  const prefix = `ak${Date.now().toString(36)}.`;
  const spot = `${w.asset}/USDT`;
  const children: Child[] = [];
  const ROUNDS = 3;
  const iso = (ms: number) => new Date(ms).toISOString();

  after(async () => {
    for (const c of children) await stopChild(c).catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const signIn = async (c: Child, email: string) => (await call<{ token: string }>('POST', '/v1/login/', { baseUrl: c.url, json: { email, password: w.password } })).body.token;
  const kpis = (round: number) => [`depth/bid_${round}bps`, `depth/ask_${round}bps`, `uptime/depth/bid_${round}bps`].map((metric) => ({ metric, exchange: w.ex, threshold: metric.startsWith('uptime/') ? round : 100 * round }));

  /** A change; after a kill it may wait for the lock the killed service held (429 until it lapses). */
  async function change(method: string, path: string, opts: Parameters<typeof call>[2]) {
    for (;;) {
      const r = await call(method, path, opts);
      if (r.status !== 429) return r;
    }
  }

  /** An open RFQ with one proposal of the market maker: the award to make. */
  async function prepare(c: Child, owner: string, maker: string, round: number): Promise<{ rfq: number; proposal: number }> {
    const q = await change('POST', '/v2/organizations/rfqs/', {
      baseUrl: c.url,
      token: owner,
      json: { asset: w.asset, title: `Round ${round}`, models: ['loan_call_option'], exchanges: [w.ex], pairs: [spot], loan_budget: { quantity: 1000 }, term_days: 30, deadline: iso(Date.now() + 86_400_000) },
    });
    expect(q.status, q.text).to.equal(201);
    expect((await change('POST', `/v2/organizations/rfqs/${q.body.id}/actions/`, { baseUrl: c.url, token: owner, json: { action: 'open' } })).status).to.equal(200);
    const p = await change('POST', `/v2/organizations/rfqs/${q.body.id}/proposals/`, {
      baseUrl: c.url,
      token: maker,
      json: { model: 'loan_call_option', loan: { quantity: 1000, tranches: [{ quantity: 1000, strike_basis: 'fixed', strike_price: 1, expires_after_days: 30 }] }, kpis: kpis(round), valid_until: iso(Date.now() + 86_400_000) },
    });
    expect(p.status, p.text).to.equal(201);
    return { rfq: q.body.id, proposal: p.body.id };
  }

  /** What the service shows of the award: the RFQ's status, its loans and its targets. */
  async function state(c: Child, owner: string, rfq: number, round: number) {
    const q = await call('GET', `/v2/organizations/rfqs/${rfq}/`, { baseUrl: c.url, token: owner });
    const loans = await call<{ id: number; rfq: number | null; status: string }[]>('GET', `/v2/organizations/loans/?organizations=${w.project}`, { baseUrl: c.url, token: owner });
    const targets = await call<{ id: number; metric: string; active: boolean }[]>('GET', `/v2/organizations/targets/?target_organizations=${w.mm}&target_assets=${w.asset}`, { baseUrl: c.url, token: owner });
    const metrics = new Set(kpis(round).map((k) => k.metric));
    return {
      status: q.body.status as string,
      loan: q.body.loan as number | null,
      loans: loans.body.filter((l) => l.rfq === rfq),
      targets: targets.body.filter((t) => metrics.has(t.metric)),
    };
  }

  /** Whole or absent: the RFQ awarded with its loan and its 3 targets, or open with neither. */
  function expectWholeOrNone(s: Awaited<ReturnType<typeof state>>, round: number): boolean {
    if (s.status === 'awarded') {
      expect(s.loans, `round ${round}: the loan`).to.have.length(1);
      expect(s.loans[0]!.id).to.equal(s.loan);
      expect(s.loans[0]!.status).to.equal('draft');
      expect(s.targets, `round ${round}: the targets`).to.have.length(3);
      for (const t of s.targets) expect(t.active).to.equal(false);
      return true;
    }
    expect(s.status, `round ${round}`).to.equal('open');
    expect(s.loans, `round ${round}: no loan`).to.have.length(0);
    expect(s.targets, `round ${round}: no targets`).to.have.length(0);
    return false;
  }


  it('leaves the award whole or absent after each kill', async () => {
    // Round 1 dies between the two inserts: the targets were written, the award not.
    let c = await startChild(tmp, prefix, 'award-gap:1');
    children.push(c);
    const loaded = await call('POST', '/v1/admin/fixtures/', { baseUrl: c.url, authorization: `Ops-Token ${opsToken(c)}`, json: w.fixture });
    expect(loaded.status, loaded.text).to.equal(200);
    let owner = await signIn(c, w.users.owner.email);
    let maker = await signIn(c, w.users.maker.email);
    const outcomes: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const { rfq, proposal } = await prepare(c, owner, maker, round);
      const request = call('POST', `/v2/organizations/rfqs/${rfq}/award/`, { baseUrl: c.url, token: owner, json: { proposal } }).catch(() => undefined);
      if (round > 1) {
        // A random moment of the request: before, during or after its inserts.
        await new Promise((r) => setTimeout(r, Math.floor(random() * 250)));
        c.proc.kill('SIGKILL');
      }
      const exit = await c.exited;
      if (round === 1) expect(exit.signal, 'the award-gap crash point').to.equal('SIGKILL');
      const answer = await request;
      c = await startChild(tmp, prefix);
      children.push(c);
      owner = await signIn(c, w.users.owner.email);
      maker = await signIn(c, w.users.maker.email);
      const after = await state(c, owner, rfq, round);
      const awarded = expectWholeOrNone(after, round);
      if (round === 1) expect(awarded, 'killed between the inserts: nothing').to.equal(false);
      if (answer && answer.status === 201) expect(awarded, `round ${round}: answered 201`).to.equal(true);
      outcomes.push(awarded ? 'awarded' : 'not awarded');
      if (!awarded) {
        // Nothing was left behind that blocks the award: made again, it is whole.
        const again = await change('POST', `/v2/organizations/rfqs/${rfq}/award/`, { baseUrl: c.url, token: owner, json: { proposal } });
        expect(again.status, again.text).to.equal(201);
        expect(again.body.targets).to.have.length(3);
        expect(expectWholeOrNone(await state(c, owner, rfq, round), round)).to.equal(true);
      }
    }
    process.stderr.write(`[award kill] rounds: ${outcomes.join(', ')}\n`);
  });
});
