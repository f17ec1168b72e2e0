// The web app in a real browser against the real service: each role signs in (one with two
// factors), the views render, values read from the page equal what the API answers for the
// same parameters, a role does not see what the API hides from it, CSV downloads are the
// API's, lists go to the API as one comma-separated value, a passkey is added and signs in
// (Chromium's virtual authenticator), an open view follows a change through the live stream,
// a target is created through the preview and the batch, no console errors, no serious or
// critical axe-core violations. Screenshots go to docs/screenshots/ (the README shows them).
import { expect } from 'chai';
import fs from 'node:fs';
import net from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startApi } from '../../api/server.ts';
import { topicName } from '../../lib/kafka.ts';
import { ensureWebBuild } from '../../ops/web-build.ts';
import { totpCode } from '../support/account.ts';
import { call, login, seed, waitFor, world } from '../support/helpers.ts';
import { generate } from '../support/market-reference.ts';
import { testStack } from '../support/stack.ts';
import { axeViolations, launch, newPage, screenshot, signIn, type Problems } from './browser.ts';

// Three hours of books and trades; the views look at the first two, whose minutes are all
// written once the third hour's snapshots have moved event time past them.
const D0 = Date.UTC(2026, 1, 2, 8, 0);
const D1 = D0 + 3 * 3600_000;
const SHOWN = { start: new Date(D0).toISOString(), end: new Date(D0 + 2 * 3600_000).toISOString() };
const REPORTED_DAY = { time_start: new Date(Date.UTC(2026, 1, 2)).toISOString(), time_end: new Date(Date.UTC(2026, 1, 3)).toISOString() };

/** A port nobody listens on now, for a server that must know its address before it starts. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

/** "$1,234" or "1,234.5" on the page as a number. */
const numberOf = (text: string) => Number(text.replace(/[$,%\s]/g, ''));

describe('web app (/app/) in Chromium', function () {
  this.timeout(240_000);
  const w = world();
  const spot = `${w.asset}/USDT`;
  const spot2 = `${w.asset}/USD`;
  const problems: Problems = { console: [] };
  let browser: Browser;
  let base: string;
  let makerSecret: string;
  /**
   * Codes of a secret, each of the next time step (within the allowed drift): a confirming
   * code may have used the current one, and each step is accepted once, so a second code
   * waits for a later step.
   */
  const codesOf = (secret: () => string) => {
    let step = 0;
    return async () => {
      while (Math.floor((Date.now() + 30_000) / 30_000) <= step) await new Promise((r) => setTimeout(r, 500));
      const at = Date.now() + 30_000;
      step = Math.floor(at / 30_000);
      return totpCode(secret(), at);
    };
  };
  const makerCode = codesOf(() => makerSecret);
  const made = { target: 0, mmTarget: 0, loan: 0, rfq: 0, proposal: 0, quote: 0 };

  const marketsUrl = (extra = '') => `${base}/app/markets?asset=${w.asset}&start=${SHOWN.start}&end=${SHOWN.end}&interval=1h&bps=10${extra}`;
  const pairsTable = (page: Page) => page.getByRole('table', { name: new RegExp(`${w.asset} pairs`) });
  const cell = (page: Page, rowName: string, column: number) => pairsTable(page).getByRole('row', { name: new RegExp(rowName.replace(/[/$]/g, '\\$&')) }).getByRole('cell').nth(column);

  before(async () => {
    await ensureWebBuild();
    base = testStack().url;
    await seed(w.fixture);
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    for (const [exchange, pair, seedNo] of [[w.ex, spot, 3], [w.ex2, spot2, 5]] as const) {
      const data = generate(D0, D1, 30_000, seedNo);
      await producer.send({ topic: topicName(config, 'md.orderbook'), messages: data.snaps.map((s) => ({ key: `${exchange}:${pair}`, value: JSON.stringify({ exchange, pair, ts: s.ts, bids: s.bids, asks: s.asks }) })) });
      await producer.send({ topic: topicName(config, 'md.trades'), messages: data.trades.map((t, i) => ({ key: `${exchange}:${pair}`, value: JSON.stringify({ exchange, pair, ts: t.ts, price: t.price, amount: t.amount, side: i % 2 ? 'buy' : 'sell', id: `w${seedNo}-${i}` }) })) });
    }
    // The market maker's own orders on the first pair, a few bps either side of a minute's
    // mid: what the Market makers view measures.
    const own = generate(D0, D1, 30_000, 3).snaps[60]!;
    const ownMid = (own.bids[0]![0] + own.asks[0]![0]) / 2;
    await producer.send({
      topic: topicName(config, 'mm.orders'),
      messages: [{ key: `${w.ex}:${spot}`, value: JSON.stringify({ organization: w.mm, wallet_id: w.fixture.wallets![0]!.id, exchange: w.ex, pair: spot, ts: own.ts + 1, bids: [[ownMid * 0.9998, 10]], asks: [[ownMid * 1.0002, 12]] }) }],
    });
    await producer.disconnect();
    const token = await login(w.users.owner.email, w.password);
    const expected = generate(D0, D1, 30_000, 3).snaps.filter((s) => s.ts < D0 + 2 * 3600_000).length;
    await waitFor(
      'the shown window written',
      async () => {
        const r = await call('GET', `/v2/metrics/summary/?assets=${w.asset}&time_start=${SHOWN.start}&time_end=${SHOWN.end}&bps=10`, { token });
        const rows = Array.isArray(r.body) ? (r.body as { pair: string; tick_bps_samples: number }[]) : [];
        return rows.find((x) => x.pair === spot)?.tick_bps_samples === expected && rows.some((x) => x.pair === spot2);
      },
      120_000,
    );
    // The market maker signs in with two factors.
    const makerToken = await login(w.users.maker.email, w.password);
    // A day of reported volume, for the market-maker summary asked in a browser below.
    const pushed = await call('POST', '/v2/organizations/reported-metrics/', {
      token: makerToken,
      json: ['volume/volume', 'depth/bid_10bps'].map((metric, i) => ({ organization: w.mm, asset: w.asset, exchange: w.ex, pair: spot, metric, interval: '1d', timestamp: REPORTED_DAY.time_start, value: 1000 + i })),
    });
    expect(pushed.status, pushed.text).to.equal(202);
    const setup = await call('POST', '/v1/totp/setup/', { token: makerToken, json: { password: w.password } });
    makerSecret = setup.body.secret;
    const confirm = await call('POST', '/v1/totp/confirm/', { token: makerToken, json: { code: await totpCode(makerSecret, Date.now()) } });
    expect(confirm.status).to.equal(204);
    // What the other views show: a gb and an mm target, a draft loan, an open RFQ with a proposal.
    const targets = await call('POST', '/v2/organizations/targets/batch/', {
      token,
      json: { create_targets: [
        { organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, metric: 'volume/volume', threshold: 1000 },
        { organization: w.mm, asset: w.asset, exchange: w.ex, pair: spot, metric: 'depth/bid_2bps', threshold: 5000 },
      ] },
    });
    expect(targets.status, targets.text).to.equal(201);
    [made.target, made.mmTarget] = targets.body.map((t: { id: number }) => t.id);
    const loan = await call('POST', '/v2/organizations/loans/', {
      token,
      json: { market_maker: w.mm, asset: w.asset, model: 'loan_call_option', quantity: 250_000, exchanges: [w.ex], pairs: [spot], start_date: '2026-01-01T00:00:00Z', end_date: '2027-12-31T00:00:00Z',
        tranches: [{ quantity: 250_000, strike_basis: 'fixed', strike_price: 120, expires_at: '2027-06-30T00:00:00Z' }] },
    });
    expect(loan.status, loan.text).to.equal(201);
    made.loan = loan.body.id;
    const rfq = await call('POST', '/v2/organizations/rfqs/', {
      token,
      json: { asset: w.asset, title: `Listing ${w.tag}`, models: ['loan_call_option'], exchanges: [w.ex], loan_budget: { quantity: 100_000 }, term_days: 90,
        requirements: [{ metric: 'depth/bid_2bps', threshold: 1000 }], invited: [w.mm], deadline: new Date(Date.now() + 5 * 86_400_000).toISOString() },
    });
    expect(rfq.status, rfq.text).to.equal(201);
    made.rfq = rfq.body.id;
    expect((await call('POST', `/v2/organizations/rfqs/${made.rfq}/actions/`, { token, json: { action: 'open' } })).status).to.equal(200);
    const proposal = await call('POST', `/v2/organizations/rfqs/${made.rfq}/proposals/`, {
      token: makerToken,
      json: { model: 'loan_call_option', loan: { quantity: 100_000, tranches: [{ quantity: 100_000, strike_basis: 'fixed', strike_price: 90, expires_after_days: 90 }] },
        kpis: [{ metric: 'depth/bid_2bps', threshold: 1500 }], valid_until: new Date(Date.now() + 10 * 86_400_000).toISOString() },
    });
    expect(proposal.status, proposal.text).to.equal(201);
    made.proposal = proposal.body.id;
    // A revision: the tranche's strike moves (a new version of the proposal).
    const revised = await call('PATCH', `/v2/organizations/rfqs/${made.rfq}/proposals/${made.proposal}/`, {
      token: makerToken,
      json: { action: 'revise', loan: { quantity: 100_000, tranches: [{ quantity: 100_000, strike_basis: 'fixed', strike_price: 95, expires_after_days: 90 }] } },
    });
    expect(revised.status, revised.text).to.equal(200);
    // An open request the market maker has not answered yet (it proposes in the app).
    const quote = await call('POST', '/v2/organizations/rfqs/', {
      token,
      json: { asset: w.asset, title: `Quote ${w.tag}`, models: ['loan_call_option', 'retainer'], exchanges: [w.ex], loan_budget: { quantity: 40_000 }, term_days: 60,
        requirements: [{ metric: 'depth/bid_2bps', threshold: 800, exchange: w.ex }], invited: [w.mm], deadline: new Date(Date.now() + 4 * 86_400_000).toISOString() },
    });
    expect(quote.status, quote.text).to.equal(201);
    made.quote = quote.body.id;
    expect((await call('POST', `/v2/organizations/rfqs/${made.quote}/actions/`, { token, json: { action: 'open' } })).status).to.equal(200);
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
  });

  it('serves the app with a strict CSP, hashed assets cached long, index.html not cached, and the 404 page elsewhere', async () => {
    const index = await fetch(`${base}/app/`);
    expect(index.status).to.equal(200);
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).to.include("default-src 'none'").and.include("script-src 'self'").and.include("connect-src 'self'").and.not.include('unsafe-inline');
    expect(index.headers.get('cache-control')).to.equal('no-cache');
    const html = await index.text();
    const asset = /src="(\/app\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const js = await fetch(`${base}${asset}`);
    expect(js.status).to.equal(200);
    expect(js.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect(js.headers.get('content-type')).to.match(/javascript/);
    // A view's address is the app; a missing file and any other unknown path are the 404 page.
    expect((await fetch(`${base}/app/markets?asset=X`)).status).to.equal(200);
    for (const p of ['/app/assets/missing-1234.js', '/app/../package.json', '/nowhere/']) {
      const r = await fetch(`${base}${p}`);
      expect(r.status, p).to.equal(404);
      expect(await r.text(), p).to.include('<h1>Not Found</h1>');
    }
  });

  it("says the API's words for a wrong password, and the sign-in page has no serious accessibility problems", async () => {
    const { context, page } = await newPage(browser, problems);
    await page.goto(`${base}/app/`);
    expect(await axeViolations(page)).to.deep.equal([]);
    await screenshot(page, 'sign-in');
    await page.getByLabel('Email').fill(w.users.owner.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(await page.getByRole('alert').textContent()).to.include('Unable to log in with provided credentials.');
    await context.close();
    // The browser logs the 400 itself as a failed resource load: not an error of the app.
    problems.console = problems.console.filter((m) => !m.includes('status of 400'));
  });

  it('the project owner sees its markets: the pairs table equals the API summary for the same parameters; CSV is the API CSV', async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.owner.email, w.password);
    await page.goto(marketsUrl());
    await pairsTable(page).waitFor();
    const token = await login(w.users.owner.email, w.password);
    const api = await call('GET', `/v2/metrics/summary/?assets=${w.asset}&time_start=${SHOWN.start}&time_end=${SHOWN.end}&bps=10`, { token });
    for (const [ex, pair] of [[w.ex, spot], [w.ex2, spot2]] as const) {
      const row = (api.body as Record<string, number | string>[]).find((r) => r.pair === pair)!;
      expect(numberOf((await cell(page, `${ex} ${pair}`, 0).textContent())!), `${pair} volume`).to.equal(Math.round(row.volume as number));
      expect(numberOf((await cell(page, `${ex} ${pair}`, 3).textContent())!), `${pair} bid 10 bps`).to.equal(Math.round(row.bid_10bps as number));
    }
    // Every chart is drawn (a canvas inside each labelled image).
    for (const name of [/Bid and ask depth within 10 bps/, /Traded volume in USD/, /Mean mid price/, /Spread uptime within 10 bps/, /Depth uptime/]) {
      await page.getByRole('img', { name }).locator('canvas').first().waitFor();
    }
    await page.getByRole('table', { name: /ranked by the service/ }).getByRole('row', { name: new RegExp(spot.replace('/', '\\/')) }).waitFor();
    expect(await axeViolations(page)).to.deep.equal([]);
    await screenshot(page, 'markets');

    const download = page.waitForEvent('download');
    await page.getByRole('region', { name: 'Pairs over the window' }).getByRole('button', { name: /Download CSV/ }).click();
    const file = await (await download).path();
    const csv = await call('GET', `/v2/metrics/summary/?assets=${w.asset}&time_start=${SHOWN.start}&time_end=${SHOWN.end}&bps=10&type=csv&filename=x.csv`, { token });
    expect(fs.readFileSync(file, 'utf8')).to.equal(csv.text);
    await context.close();
  });

  it('the leaderboard sorts through the API', async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.owner.email, w.password);
    await page.goto(marketsUrl());
    const board = page.getByRole('table', { name: /ranked by the service/ });
    await board.getByRole('row', { name: new RegExp(spot.replace('/', '\\/')) }).waitFor();
    await board.getByRole('button', { name: 'Volume' }).click();
    await page.waitForFunction(() => document.querySelector('th[aria-sort="ascending"]') !== null);
    const token = await login(w.users.owner.email, w.password);
    const api = await call('GET', `/v2/leaderboard/?time_start=${SHOWN.start}&time_end=${SHOWN.end}&bps=10&sort_by=volume&sort_direction=asc&market_type=all`, { token });
    const expected = (api.body as { exchange: string; pair: string }[]).map((r) => `${r.exchange} ${r.pair}`);
    await page.waitForFunction((first) => document.querySelector('table tbody th')?.textContent === first, expected[0]);
    const shown = await board.locator('tbody th').allTextContents();
    expect(shown).to.deep.equal(expected);
    // The sort is in the address: a reload keeps it.
    expect(new URL(page.url()).searchParams.get('lb_dir')).to.equal('asc');
    await page.reload();
    await board.getByRole('row', { name: new RegExp(spot.replace('/', '\\/')) }).waitFor();
    expect(await page.locator('th[aria-sort="ascending"]').count()).to.equal(1);
    expect(await board.locator('tbody th').allTextContents()).to.deep.equal(expected);
    await context.close();
  });

  it('the market maker signs in with its two-factor code and sees only the pairs the API shows it', async () => {
    const { context, page } = await newPage(browser, problems, 390);
    await signIn(page, base, w.users.maker.email, w.password, makerCode);
    await page.goto(marketsUrl());
    await pairsTable(page).waitFor();
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
    const api = await call('GET', `/v2/metrics/summary/?time_start=${SHOWN.start}&time_end=${SHOWN.end}&bps=10`, { token });
    const apiPairs = (api.body as { exchange: { slug: string }; pair: string }[]).map((r) => `${r.exchange.slug} ${r.pair}`);
    expect(apiPairs).to.deep.equal([`${w.ex} ${spot}`]);
    const shown = await pairsTable(page).locator('tbody th').allTextContents();
    expect(shown).to.deep.equal(apiPairs);
    // The exchange it does not cover is neither offered nor drawn.
    expect(await page.getByRole('checkbox', { name: `Exchange two ${w.tag}` }).count()).to.equal(0);
    await screenshot(page, 'markets-phone');
    // Its own target on the project's asset: shown, not changeable (a market maker's members set no targets).
    await page.goto(`${base}/app/targets?target=${made.mmTarget}`);
    await page.getByRole('region', { name: new RegExp(`Target ${made.mmTarget}:`) }).waitFor();
    expect(await page.getByRole('region', { name: 'Change the target' }).count()).to.equal(0);
    expect(await page.getByRole('form', { name: 'New target' }).count()).to.equal(0);
    await context.close();
  });

  it('a user of no organization sees that there is nothing to show; sign-out revokes the token', async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.loner.email, w.password);
    await page.getByText('Your organizations cover no assets yet').waitFor();
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
    expect((await call('GET', '/v1/session/', { token })).status).to.equal(200);
    // Operations is for staff: no link, and its address shows Markets.
    await page.getByRole('link', { name: 'Account' }).waitFor();
    expect(await page.getByRole('link', { name: 'Operations' }).count()).to.equal(0);
    await page.goto(`${base}/app/operations`);
    await page.waitForURL(/\/app\/markets$/);
    await page.getByText('Your organizations cover no assets yet').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('mm-metrics.token'))).to.equal(null);
    expect((await call('GET', '/v1/session/', { token })).status).to.equal(401);
    await context.close();
  });

  it('staff see Operations: each processor\'s counts within the status endpoint\'s before and after, and a pair\'s stored minutes as the API lists them', async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.staff.email, w.password);
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
    const status = async () => (await call('GET', '/v1/admin/status/', { token })).body as { processors: Record<string, { ok: number; deadLettered: number; readsHeldBack: number; recentDeadLetters: { key: string | null }[] }> };
    // A trade of a pair nobody knows: dead-lettered, and listed with its reason.
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    const unknown = `NOPE${w.tag}/USD`;
    await producer.send({ topic: topicName(config, 'md.trades'), messages: [{ key: `dead-${w.tag}`, value: JSON.stringify({ exchange: w.ex, pair: unknown, ts: Date.now(), price: 1, amount: 1, side: 'buy', id: `dead-${w.tag}` }) }] });
    await producer.disconnect();
    await waitFor('the dead letter in the status', async () => (await status()).processors[topicName(config, 'md.trades')]?.recentDeadLetters.some((d) => d.key === `dead-${w.tag}`), 30_000);
    const before = await status();
    await page.getByRole('link', { name: 'Operations' }).click();
    const processors = page.getByRole('table', { name: /^Rows written/ });
    await processors.waitFor();
    const after = await status();
    const names = Object.keys(after.processors);
    expect(Object.values(after.processors).some((p) => p.ok > 0)).to.equal(true);
    expect(await processors.getByRole('rowheader').allTextContents()).to.have.members(names);
    for (const name of names) {
      const cells = processors.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) }).getByRole('cell');
      expect(numberOf((await cells.nth(0).textContent())!), name).to.be.within(before.processors[name]!.ok, after.processors[name]!.ok);
      expect(numberOf((await cells.nth(1).textContent())!), name).to.be.within(before.processors[name]!.deadLettered, after.processors[name]!.deadLettered);
      expect(numberOf((await cells.nth(5).textContent())!), name).to.be.within(before.processors[name]!.readsHeldBack, after.processors[name]!.readsHeldBack);
    }
    const deadRow = page.getByRole('table', { name: /^The last \d+ dead letters/ }).getByRole('row').filter({ hasText: `dead-${w.tag}` });
    const [processor, where, key, reason] = await deadRow.getByRole('cell').allTextContents();
    expect([processor, key, reason]).to.deep.equal([topicName(config, 'md.trades'), `dead-${w.tag}`, `unknown pair: ${w.ex} ${unknown}`]);
    expect(where).to.match(/^\d+ · \d+$/);
    // The first hour the Markets view shows, whose minutes are all written.
    const form = page.getByRole('form', { name: 'Stored minutes of' });
    await form.getByLabel('Pair').selectOption(`${w.ex} ${spot}`);
    await form.getByLabel(/^Ending/).fill(new Date(D0 + 3_600_000).toISOString().slice(0, 16));
    const listed = (await call('GET', `/v1/admin/orderbook/minutes/?${new URLSearchParams({ exchange: w.ex, pair: spot, time_start: SHOWN.start, time_end: new Date(D0 + 3_600_000).toISOString() })}`, { token })).body as { minute: string; samples: number }[];
    expect(listed).to.have.length(60);
    const panel = page.getByRole('region', { name: 'Stored order-book minutes' });
    await panel.getByText(`60 of 60 minutes hold data; the last 02 Feb 2026, 08:59 UTC.`, { exact: false }).waitFor();
    // The pair and the end are in the address: a reload shows the same minutes.
    await page.reload();
    await panel.getByText(`60 of 60 minutes hold data; the last 02 Feb 2026, 08:59 UTC.`, { exact: false }).waitFor();
    expect(await form.getByLabel('Pair').inputValue()).to.equal(`${w.ex} ${spot}`);
    const newest = panel.getByRole('table', { name: 'The newest stored minutes' }).getByRole('row').nth(1).getByRole('cell');
    expect(numberOf((await newest.nth(0).textContent())!)).to.equal(listed.at(-1)!.samples);
    expect(await axeViolations(page)).to.deep.equal([]);
    await screenshot(page, 'operations');
    await context.close();
  });

  it('the project owner sees every view: targets by status with history, market makers, the loan and its actions, the proposals compared', async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.owner.email, w.password);
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;

    await page.getByRole('link', { name: 'Targets' }).click();
    const unchecked = page.getByRole('region', { name: /^Unchecked/ });
    await unchecked.getByRole('button', { name: new RegExp(`${w.asset} ${w.ex} .*volume/volume`) }).click();
    await page.getByRole('region', { name: new RegExp(`Target ${made.target}:`) }).waitFor();
    await page.getByRole('region', { name: 'Change the target' }).waitFor();
    // The market maker's target on the project's asset: the project changes it too (the API's rule, domain/targets/facts.ts).
    await unchecked.getByRole('button', { name: new RegExp(`${w.asset} ${w.ex} .*depth/bid_2bps`) }).click();
    await page.getByRole('region', { name: new RegExp(`Target ${made.mmTarget}:`) }).waitFor();
    await page.getByRole('region', { name: 'Change the target' }).waitFor();
    const listed = await call('GET', '/v2/organizations/targets/', { token });
    expect((listed.body as { id: number }[]).map((t) => t.id)).to.include.members([made.target, made.mmTarget]);
    expect(await unchecked.getByRole('button').count()).to.equal(listed.body.filter((t: { status: string }) => t.status === 'unchecked').length);
    expect(await axeViolations(page)).to.deep.equal([]);
    await screenshot(page, 'targets');

    await page.getByRole('link', { name: 'Market makers' }).click();
    await page.getByRole('heading', { name: 'Reported against measured' }).waitFor();
    await page.getByRole('heading', { name: 'Coverage of the market' }).waitFor();
    // A market-maker summary asked again once its pieces are compressed comes as zstd frames
    // one after the other (Chromium accepts zstd), decoded by Chromium to the same rows.
    const summaryUrl = `${base}/v2/organizations/market-maker-metrics/summary/?${new URLSearchParams({ ...REPORTED_DAY, interval: '1d', bps: '10' })}`;
    let plainSummary = await call('GET', summaryUrl.slice(base.length), { token });
    // The reported values come through Kafka.
    await waitFor('the reported day', async () => (plainSummary = await call('GET', summaryUrl.slice(base.length), { token })).body.length > 0, 60_000);
    const inBrowser = await page.evaluate(
      async ([url, t]) => {
        for (let i = 0; i < 50; i++) {
          const r = await fetch(url, { headers: { Authorization: `Token ${t}` } });
          const rows: unknown = await r.json();
          if (r.headers.get('Content-Encoding') === 'zstd') return rows;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        return 'never zstd';
      },
      [summaryUrl, token] as const,
    );
    expect(inBrowser).to.deep.equal(plainSummary.body);
    // A range, the day the market maker reported: the tables are the API's answers for it.
    const range = { time_start: REPORTED_DAY.time_start.slice(0, 16), time_end: REPORTED_DAY.time_end.slice(0, 16), interval: 'a', bps: '10' };
    const mmAnswer = async (path: string) => (await call('GET', `${path}?${new URLSearchParams(range)}`, { token })).body as Record<string, any>[];
    let depthRows: Record<string, any>[] = [];
    await waitFor('the own orders measured', async () => (depthRows = await mmAnswer('/v2/organizations/trusted-metrics/depth/')).length > 0, 60_000);
    const reconRows = await mmAnswer('/v2/organizations/market-maker-metrics/reconciliation/');
    const mine = reconRows.filter((r) => r.organization.slug === w.mm && r.pair === spot);
    expect(mine).to.have.length(1);
    expect(depthRows).to.have.length(1);
    const mmForm = page.getByRole('form', { name: 'Market maker parameters' });
    await mmForm.getByLabel('Window').selectOption('range');
    await mmForm.getByLabel('From (UTC)').fill(range.time_start);
    await mmForm.getByLabel(/^To \(UTC/).fill(range.time_end);
    const rowOf = (table: string, r: Record<string, any>) =>
      page.getByRole('table', { name: new RegExp(`^${table}`) }).getByRole('row', { name: new RegExp(`${r.organization.name} · ${r.exchange} ${r.pair}`.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')) }).getByRole('cell');
    // Cells read until they hold the range's values (the first date alone was asked before).
    const shows = async (what: string, cells: ReturnType<typeof rowOf>, expected: [number, number][]) =>
      waitFor(what, async () => {
        for (const [i, v] of expected) if ((await cells.count()) === 0 || numberOf((await cells.nth(i).textContent())!) !== Math.round(v)) return false;
        return true;
      }, 15_000);
    await shows('the reconciliation of the range', rowOf('Per market maker and pair', mine[0]!), [[1, mine[0]!.volume_reported], [3, mine[0]!.bid_10bps_reported], [4, mine[0]!.bid_10bps_trusted]]);
    await shows('the depth from own orders', rowOf('Mean depth within 10 bps', depthRows[0]!), [[0, depthRows[0]!.bid_10bps], [1, depthRows[0]!.ask_10bps]]);
    expect(depthRows[0]!.bid_10bps).to.be.greaterThan(0);
    // Daily buckets: the day's reported and measured bid depth drawn.
    await mmForm.getByLabel('Interval').selectOption('1d');
    await page.getByRole('img', { name: /^Measured \(solid\) and reported \(dashed\) bid depth within 10 bps/ }).waitFor();
    // The reported volume's CSV (its own button in the panel) is the API's for the range at `1d`.
    const volumeDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV: reported-volume.csv' }).click();
    const volumeCsv = await call('GET', `/v2/organizations/reported-metrics/volume/?${new URLSearchParams({ time_start: range.time_start, time_end: range.time_end, interval: '1d', type: 'csv', filename: 'x.csv' })}`, { token });
    expect(volumeCsv.text).to.match(/1000/);
    expect(fs.readFileSync(await (await volumeDownload).path(), 'utf8')).to.equal(volumeCsv.text);
    await page.waitForFunction(() => !document.querySelector('[role="status"]'));
    expect(await axeViolations(page)).to.deep.equal([]);
    await screenshot(page, 'market-makers');

    await page.getByRole('link', { name: 'Loans' }).click();
    await page.getByRole('link', { name: `#${made.loan} ${w.asset}` }).click();
    const detail = page.getByRole('region', { name: new RegExp(`Loan #${made.loan}`) });
    const loan = await call('GET', `/v2/organizations/loans/${made.loan}/`, { token });
    const tranche = detail.getByRole('table', { name: 'Tranches' }).getByRole('row').nth(1);
    expect(numberOf((await tranche.getByRole('cell').nth(0).textContent())!)).to.equal(loan.body.tranches[0].quantity);
    await detail.getByRole('button', { name: 'Activate' }).waitFor();
    expect(await axeViolations(page)).to.deep.equal([]);
    await screenshot(page, 'loans');
    // Activated, then its one tranche settled (returned, part of it): the loan is settled.
    await detail.getByRole('button', { name: 'Activate' }).click();
    const settle = detail.getByRole('group', { name: `Settle tranche ${loan.body.tranches[0].id}` });
    await settle.getByLabel('Tokens settled').fill('200000');
    // What cannot be undone is asked first: "No" changes nothing, "Yes" settles.
    const settleTranche = `Settle tranche ${loan.body.tranches[0].id}`;
    await settle.getByRole('button', { name: settleTranche, exact: true }).click();
    await settle.getByRole('button', { name: 'No', exact: true }).click();
    expect((await call('GET', `/v2/organizations/loans/${made.loan}/`, { token })).body.status).to.equal('active');
    await settle.getByRole('button', { name: settleTranche, exact: true }).click();
    await settle.getByRole('button', { name: `Yes, s${settleTranche.slice(1)}` }).click();
    await detail.getByText('settled', { exact: true }).waitFor();
    const settled = await call('GET', `/v2/organizations/loans/${made.loan}/`, { token });
    expect(settled.body.status).to.equal('settled');
    expect(settled.body.tranches.map((t: Record<string, unknown>) => [t.settlement, t.settled_quantity])).to.deep.equal([['returned', 200_000]]);
    expect(await detail.getByRole('button', { name: /^(Activate|Cancel|Recall|Default|Settle tranche \d+)$/ }).count()).to.equal(0);

    // A new loan made in the form: the API's draft holds what was entered, and it is shown.
    const newLoan = page.getByRole('form', { name: 'New loan' });
    await newLoan.getByLabel('Asset').selectOption(w.asset);
    // The market makers the API has named to the owner are offered (its loan's).
    await waitFor('the market makers offered', async () => (await newLoan.locator('datalist option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).includes(w.mm));
    await newLoan.getByLabel('Market maker (slug)').fill(w.mm);
    await newLoan.getByLabel('Tokens lent').fill('30000');
    await newLoan.getByLabel(`Exchange ${w.tag} ${spot}`, { exact: true }).check();
    await newLoan.getByLabel('Starts (UTC day)').fill('2026-01-01');
    await newLoan.getByLabel('Ends (UTC day)').fill('2027-01-01');
    const firstTranche = newLoan.getByRole('group', { name: 'Tranche 1' });
    await firstTranche.getByLabel('Tokens').fill('30000');
    await firstTranche.getByLabel('Strike price (USD)').fill('80');
    // The API's words at the fields they name: an end before the start, a tranche expiring before it is disbursed.
    await newLoan.getByLabel('Ends (UTC day)').fill('2025-06-01');
    await firstTranche.getByLabel('Expires (UTC day)').fill('2025-12-31');
    await newLoan.getByRole('button', { name: 'Save the draft loan' }).click();
    const ends = newLoan.getByLabel('Ends (UTC day)');
    await newLoan.locator('[aria-invalid="true"]').first().waitFor();
    expect(await ends.getAttribute('aria-invalid')).to.equal('true');
    const endWords = await page.locator(`#${await ends.getAttribute('aria-describedby')}`).textContent();
    expect(endWords).to.match(/start_date/);
    expect(await firstTranche.getByLabel('Expires (UTC day)').getAttribute('aria-invalid')).to.equal('true');
    await newLoan.getByLabel('Ends (UTC day)').fill('2027-01-01');
    await firstTranche.getByLabel('Expires (UTC day)').fill('2026-12-31');
    await newLoan.getByRole('button', { name: 'Save the draft loan' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft loan saved' }).waitFor();
    const shownId = Number(new URL(page.url()).searchParams.get('loan'));
    const made2 = await call('GET', `/v2/organizations/loans/${shownId}/`, { token });
    expect(made2.body).to.deep.include({ asset: w.asset, model: 'loan_call_option', quantity: 30_000, status: 'draft', exchanges: [w.ex], pairs: [spot] });
    expect(made2.body.market_maker.slug).to.equal(w.mm);
    expect(made2.body.tranches.map((t: Record<string, unknown>) => [t.quantity, t.strike_basis, t.strike_price, t.expires_at])).to.deep.equal([[30_000, 'fixed', 80, '2026-12-31T00:00:00.000Z']]);
    const shown = page.getByRole('region', { name: new RegExp(`Loan #${shownId}`) });
    await shown.getByRole('button', { name: 'Activate' }).waitFor();
    // The draft changed from its own terms: the strike and the end move, nothing else.
    await shown.getByRole('button', { name: 'Change the draft' }).click();
    const draftLoan = shown.getByRole('form', { name: 'Draft loan' });
    expect(await draftLoan.getByLabel('Tokens lent').inputValue()).to.equal('30000');
    expect(await draftLoan.getByLabel(`Exchange ${w.tag} ${spot}`, { exact: true }).isChecked()).to.equal(true);
    const draftTranche = draftLoan.getByRole('group', { name: 'Tranche 1' });
    expect(await draftTranche.getByLabel('Expires (UTC day)').inputValue()).to.equal('2026-12-31');
    await draftTranche.getByLabel('Strike price (USD)').fill('85');
    await draftLoan.getByLabel('Ends (UTC day)').fill('2027-02-01');
    await draftLoan.getByRole('button', { name: 'Save the changes' }).click();
    await shown.getByRole('status').filter({ hasText: 'Draft changed.' }).waitFor();
    const changedLoan = await call('GET', `/v2/organizations/loans/${shownId}/`, { token });
    expect(changedLoan.body).to.deep.include({ quantity: 30_000, status: 'draft', exchanges: [w.ex], pairs: [spot], start_date: made2.body.start_date, end_date: '2027-02-01T00:00:00.000Z' });
    expect(changedLoan.body.tranches.map((t: Record<string, unknown>) => [t.quantity, t.strike_price, t.expires_at])).to.deep.equal([[30_000, 85, '2026-12-31T00:00:00.000Z']]);
    await shown.getByRole('table', { name: 'Tranches' }).getByRole('cell', { name: '85', exact: true }).waitFor();
    // The list filtered by a status, as the API filters it: the draft, not the settled loan.
    const loanFilter = page.getByRole('form', { name: 'Loan filters' });
    await loanFilter.getByLabel('Status').selectOption('draft');
    const draftLoans = ((await call('GET', '/v2/organizations/loans/?statuses=draft', { token })).body as { id: number }[]).map((l) => l.id);
    expect(draftLoans).to.include(shownId).and.not.include(made.loan);
    const loanTable = page.getByRole('table', { name: 'Token loans you can see' });
    await waitFor('the drafts listed', async () => (await loanTable.getByRole('row').count()) === draftLoans.length + 1 && (await loanTable.getByRole('link', { name: `#${made.loan} ${w.asset}`, exact: true }).count()) === 0);
    await loanTable.getByRole('link', { name: `#${shownId} ${w.asset}`, exact: true }).waitFor();
    await loanFilter.getByLabel('Status').selectOption('all');

    await page.getByRole('link', { name: 'RFQ' }).click();
    await page.getByRole('link', { name: `Listing ${w.tag}` }).click();
    const compared = page.getByRole('table', { name: 'Proposals side by side' });
    await compared.getByRole('columnheader', { name: `Maker ${w.tag}` }).waitFor();
    const proposals = await call('GET', `/v2/organizations/rfqs/${made.rfq}/proposals/`, { token });
    const cost = await compared.getByRole('row', { name: /Cost over the term/ }).getByRole('cell').first().textContent();
    expect(numberOf(cost!)).to.equal(Math.round(proposals.body[0].cost_usd));
    // What was asked, above the proposals; each requirement as each proposal meets it.
    const asked = page.getByRole('region', { name: 'What the request asks' });
    expect(await asked.getByRole('listitem').allTextContents()).to.deep.equal(['depth/bid_2bps ≥ 1,000']);
    const meets = await compared.getByRole('row', { name: /Meets depth\/bid_2bps ≥ 1,000/ }).getByRole('cell').allTextContents();
    expect(meets).to.deep.equal(proposals.body.map((p: { requirements_met: { status: string }[] }) => p.requirements_met[0]!.status));
    await page.getByRole('button', { name: `Shortlist Maker ${w.tag}` }).waitFor();
    // A submitted proposal may be shortlisted, rejected or awarded (the domain's rule).
    for (const decision of ['Shortlist', 'Reject', 'Award']) expect(await page.getByRole('button', { name: `${decision} Maker ${w.tag}` }).isEnabled(), decision).to.equal(true);
    // The open request may be closed or cancelled, not opened again.
    const requestActions = page.getByRole('group', { name: 'The request' });
    expect(await requestActions.getByRole('button').allTextContents()).to.deep.equal(['Close the request', 'Cancel the request']);
    expect(await axeViolations(page)).to.deep.equal([]);

    // A draft made in the form (the browser's zone is UTC here), then opened and cancelled.
    const form = page.getByRole('form', { name: 'New request' });
    const deadline = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 3 * 86_400_000);
    await form.getByLabel('Asset').selectOption(w.asset);
    await form.getByLabel('Title').fill(`Draft ${w.tag}`);
    await form.getByLabel(`Exchange ${w.tag}`, { exact: true }).check();
    await form.getByLabel('Tokens to lend at most').fill('50000');
    await form.getByLabel('Term (days)').fill('30');
    await form.getByRole('button', { name: 'Add a requirement' }).click();
    const requirement = form.getByRole('group', { name: 'Requirement 1' });
    await requirement.getByLabel('Metric').selectOption('depth/bid_2bps');
    await requirement.getByLabel('Threshold').fill('500');
    await form.getByLabel(/^Invited market makers/).fill(w.mm);
    await form.getByLabel(/^Deadline/).fill(deadline.toISOString().slice(0, 16));
    await form.getByRole('button', { name: 'Save the draft' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved' }).waitFor();
    const drafts = ((await call('GET', '/v2/organizations/rfqs/', { token })).body as { id: number; title: string }[]).filter((r) => r.title === `Draft ${w.tag}`);
    expect(drafts).to.have.length(1);
    const draft = await call('GET', `/v2/organizations/rfqs/${drafts[0]!.id}/`, { token });
    expect(draft.body).to.deep.include({ asset: w.asset, models: ['loan_call_option'], exchanges: [w.ex], term_days: 30, invited: [w.mm], sealed: false, status: 'draft', deadline: deadline.toISOString() });
    expect(draft.body.loan_budget.quantity).to.equal(50_000);
    expect(draft.body.requirements.map((r: { metric: string; threshold: number; direction: string }) => [r.metric, r.threshold, r.direction])).to.deep.equal([['depth/bid_2bps', 500, 'above']]);
    expect(new URL(page.url()).searchParams.get('rfq')).to.equal(String(draft.body.id));
    // The draft changed from its own terms: the term, the requirement's threshold and a description.
    await requestActions.getByRole('button', { name: 'Change the draft' }).click();
    const draftForm = page.getByRole('form', { name: 'Draft request' });
    expect(await draftForm.getByLabel('Title').inputValue()).to.equal(`Draft ${w.tag}`);
    expect(await draftForm.getByLabel(/^Deadline/).inputValue()).to.equal(deadline.toISOString().slice(0, 16));
    await draftForm.getByLabel('Term (days)').fill('45');
    await draftForm.getByRole('group', { name: 'Requirement 1' }).getByLabel('Threshold').fill('600');
    await draftForm.getByLabel('Description').fill('Two exchanges next quarter.');
    await draftForm.getByRole('button', { name: 'Save the changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft changed.' }).waitFor();
    const changedDraft = await call('GET', `/v2/organizations/rfqs/${draft.body.id}/`, { token });
    expect(changedDraft.body).to.deep.include({ term_days: 45, description: 'Two exchanges next quarter.', exchanges: [w.ex], invited: [w.mm], status: 'draft', deadline: deadline.toISOString(), version: draft.body.version + 1 });
    expect(changedDraft.body.pairs).to.deep.equal(draft.body.pairs);
    expect(changedDraft.body.requirements.map((r: { metric: string; threshold: number; direction: string }) => [r.metric, r.threshold, r.direction])).to.deep.equal([['depth/bid_2bps', 600, 'above']]);
    // The list filtered by a status, as the API filters it: the draft, not the open request.
    const requestFilter = page.getByRole('form', { name: 'Request filters' });
    await requestFilter.getByLabel('Status').selectOption('draft');
    const requestTable = page.getByRole('table', { name: 'Requests you can see' });
    await requestTable.getByRole('link', { name: `Draft ${w.tag}` }).waitFor();
    await waitFor('the open request gone from the list', async () => (await requestTable.getByRole('link', { name: `Listing ${w.tag}` }).count()) === 0);
    const draftRequests = (await call('GET', '/v2/organizations/rfqs/?statuses=draft', { token })).body as { id: number }[];
    expect(await requestTable.getByRole('row').count()).to.equal(draftRequests.length + 1);
    await requestFilter.getByLabel('Status').selectOption('all');
    const statusOf = async () => (await call('GET', `/v2/organizations/rfqs/${draft.body.id}/`, { token })).body.status as string;
    await requestActions.getByRole('button', { name: 'Open the request' }).click();
    await requestActions.getByRole('button', { name: 'Close the request' }).waitFor();
    expect(await statusOf()).to.equal('open');
    await requestActions.getByRole('button', { name: 'Cancel the request' }).click();
    await requestActions.getByRole('button', { name: 'Yes, cancel the request' }).click();
    await page.getByRole('table', { name: 'Requests you can see' }).getByRole('row', { name: new RegExp(`Draft ${w.tag}.*cancelled`) }).waitFor();
    expect(await statusOf()).to.equal('cancelled');
    expect(await requestActions.getByRole('button').count()).to.equal(0);
    await context.close();
  });

  it('the market maker sees its own targets, not the project\'s; the loan made to it without actions; its own proposal', async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.maker.email, w.password, makerCode);
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
    await page.goto(`${base}/app/targets`);
    const unchecked = page.getByRole('region', { name: /^Unchecked/ });
    await unchecked.getByRole('button', { name: /depth\/bid_2bps/ }).waitFor();
    const listed = (await call('GET', '/v2/organizations/targets/', { token })).body as { id: number }[];
    expect(listed.map((t) => t.id)).to.include(made.mmTarget).and.not.include(made.target);
    expect(await page.getByRole('button', { name: /volume\/volume/ }).count()).to.equal(0);

    await page.goto(`${base}/app/loans?loan=${made.loan}`);
    const detail = page.getByRole('region', { name: new RegExp(`Loan #${made.loan}`) });
    await detail.getByRole('table', { name: 'Tranches' }).waitFor();
    expect(await detail.getByRole('button', { name: /^(Activate|Cancel|Recall|Default)$/ }).count()).to.equal(0);

    await page.goto(`${base}/app/rfq?rfq=${made.rfq}`);
    await page.getByRole('table', { name: 'Proposals side by side' }).getByRole('columnheader', { name: `Maker ${w.tag}` }).waitFor();
    expect(await page.getByRole('button', { name: /Award/ }).count()).to.equal(0);
    expect(await page.getByRole('group', { name: 'The request' }).count()).to.equal(0);
    // Its proposal there is live: it may withdraw it, not send another.
    await page.getByRole('button', { name: `Withdraw the proposal of Maker ${w.tag}` }).waitFor();
    expect(await page.getByRole('form', { name: 'Your proposal', exact: true }).count()).to.equal(0);

    // A proposal to the request it has not answered, made in the form: the API holds what was entered.
    await page.goto(`${base}/app/rfq?rfq=${made.quote}`);
    const form = page.getByRole('form', { name: 'Your proposal', exact: true });
    const validUntil = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 6 * 86_400_000);
    await form.getByLabel('Loan model').selectOption('loan_call_option');
    const tranche = form.getByRole('group', { name: 'Tranche 1' });
    expect(await tranche.getByLabel('Tokens').inputValue()).to.equal('40000');
    await tranche.getByLabel('Strike price (USD)').fill('100');
    // The request's requirement to start from, offered stronger.
    const kpi = form.getByRole('group', { name: 'KPI 1' });
    expect(await kpi.getByLabel('Metric').inputValue()).to.equal('depth/bid_2bps');
    // On the requirement's exchange, which the form does not ask: said, and sent as it was.
    await kpi.getByText(`on ${w.ex}`, { exact: true }).waitFor();
    await kpi.getByLabel('Threshold').fill('1200');
    await form.getByLabel('Retainer (USD a month)').fill('2500');
    await form.getByLabel(/^Valid until/).fill(validUntil.toISOString().slice(0, 16));
    await form.getByRole('button', { name: 'Send the proposal' }).click();
    await page.getByRole('button', { name: `Withdraw the proposal of Maker ${w.tag}` }).waitFor();
    const sent = (await call('GET', `/v2/organizations/rfqs/${made.quote}/proposals/`, { token })).body as Record<string, any>[];
    expect(sent).to.have.length(1);
    expect(sent[0]).to.deep.include({ model: 'loan_call_option', status: 'submitted', retainer_fee_usd_month: 2500, valid_until: validUntil.toISOString() });
    expect(sent[0]!.loan.quantity).to.equal(40_000);
    expect(sent[0]!.loan.tranches.map((t: Record<string, unknown>) => [t.quantity, t.strike_basis, t.strike_price, t.expires_after_days])).to.deep.equal([[40_000, 'fixed', 100, 60]]);
    expect(sent[0]!.kpis.map((k: { metric: string; threshold: number; exchange: string | null }) => [k.metric, k.threshold, k.exchange])).to.deep.equal([['depth/bid_2bps', 1200, w.ex]]);
    expect(await axeViolations(page)).to.deep.equal([]);
    // Revised from its own terms: a new version with the strike changed, nothing else.
    await page.getByRole('button', { name: `Revise the proposal of Maker ${w.tag}` }).click();
    const revise = page.getByRole('form', { name: 'Revise your proposal' });
    const revisedTranche = revise.getByRole('group', { name: 'Tranche 1' });
    expect(await revisedTranche.getByLabel('Strike price (USD)').inputValue()).to.equal('100');
    expect(await revise.getByRole('group', { name: 'KPI 1' }).getByLabel('Threshold').inputValue()).to.equal('1200');
    expect(await revise.getByLabel(/^Valid until/).inputValue()).to.equal(validUntil.toISOString().slice(0, 16));
    await revisedTranche.getByLabel('Strike price (USD)').fill('110');
    await revise.getByRole('button', { name: 'Send the revision' }).click();
    await revise.getByRole('status').filter({ hasText: 'Revision sent.' }).waitFor();
    const after = (await call('GET', `/v2/organizations/rfqs/${made.quote}/proposals/`, { token })).body[0] as Record<string, any>;
    expect([after.version, after.status, after.loan.tranches[0].strike_price, after.retainer_fee_usd_month, after.valid_until]).to.deep.equal([2, 'submitted', 110, 2500, validUntil.toISOString()]);
    await page.getByRole('button', { name: `Withdraw the proposal of Maker ${w.tag}` }).click();
    await page.getByRole('button', { name: `Yes, withdraw the proposal of Maker ${w.tag}` }).click();
    await form.waitFor();
    expect((await call('GET', `/v2/organizations/rfqs/${made.quote}/proposals/`, { token })).body[0].status).to.equal('withdrawn');
    await context.close();
  });

  it('sends lists as one comma-separated value: a session\'s days, the leaderboard\'s exchanges, a targets filter', async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.owner.email, w.password);
    const days = ['this:1', 'this:2', 'last:1', 'last:2'];
    const summary = page.waitForResponse((r) => r.url().includes('/v2/metrics/summary/') && r.url().includes('market_hours_session='));
    const board = page.waitForResponse((r) => r.url().includes('/v2/leaderboard/') && r.url().includes('exchanges='));
    await page.goto(`${base}/app/markets?asset=${w.asset}&session=market-hours&days=${days.join(',')}&bps=10&exchanges=${w.ex},${w.ex2}`);
    for (const [answer, name, values] of [[await summary, 'market_hours_days', days], [await board, 'exchanges', [w.ex, w.ex2]]] as const) {
      expect(answer.status(), answer.url()).to.equal(200);
      expect(new URL(answer.url()).searchParams.getAll(name)).to.deep.equal([values.join(',')]);
    }
    await pairsTable(page).waitFor();

    await page.getByRole('link', { name: 'Targets' }).click();
    await page.getByRole('region', { name: /^Unchecked \(2\)/ }).waitFor();
    const filtered = page.waitForResponse((r) => r.url().includes('/v2/organizations/targets/') && r.url().includes('types='));
    await page.getByLabel('Type').selectOption('mm');
    expect(new URL((await filtered).url()).searchParams.getAll('types')).to.deep.equal(['mm']);
    // The API's answer for the filter: the mm target alone.
    await page.getByRole('region', { name: /^Unchecked \(1\)/ }).getByRole('button', { name: /depth\/bid_2bps/ }).waitFor();
    await context.close();
  });

  it('follows the data: a target changed through the API appears in the open Targets view without a reload, through the live stream', async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.owner.email, w.password);
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
    const opened = page.waitForResponse((r) => r.url().includes('/v2/stream/tickets/') && r.request().method() === 'GET' && new URL(r.url()).searchParams.get('events') === 'target,minute');
    await page.getByRole('link', { name: 'Targets' }).click();
    // The stream is opened with a single-use ticket in its path, never with the token.
    const stream = await opened;
    expect(stream.status()).to.equal(200);
    expect(new URL(stream.url()).pathname).to.match(/^\/v2\/stream\/tickets\/[A-Za-z0-9_-]{43}\/$/);
    expect(stream.url()).to.not.include(token);
    await page.getByText('Live', { exact: true }).waitFor();
    const card = (threshold: string) => page.getByRole('region', { name: /^Unchecked/ }).getByRole('button', { name: new RegExp(`${w.asset} ${w.ex} ${spot.replace('/', '\\/')} volume/volume.* ${threshold}$`) });
    await card('1,000').waitFor();
    // A new ticket would mean the stream failed, and while it is down the views refresh every
    // 15 s: with none asked, the change below can only come through the stream.
    let tickets = 0;
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/v2/stream/tickets/')) tickets += 1;
    });

    // The threshold changed through the API (a batch replaces the target: a new id) ...
    const changed = await call('POST', '/v2/organizations/targets/batch/', {
      token,
      json: { delete_ids: [made.target], create_targets: [{ organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, metric: 'volume/volume', threshold: 1234 }] },
    });
    expect(changed.status, changed.text).to.equal(201);
    made.target = changed.body[0].id;
    // ... and its status change, as the evaluator publishes it (the test stack runs none): the
    // batch itself publishes no stream event.
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: topicName(config, 'targets.events'),
      messages: [{ key: String(made.target), value: JSON.stringify({
        event_id: `web-${w.tag}-${made.target}`, target_id: made.target, type: 'gb', organization: w.project, asset: w.asset, exchange: w.ex, pair: spot,
        metric: 'volume/volume', market_hours: null, previous_status: 'unchecked', status: 'alert', value: 10, effective_threshold: 1234, direction: 'above',
        minute: new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString(), telegram_notifications: false,
      }) }],
    });
    await producer.disconnect();
    await card('1,234').waitFor();
    expect(await card('1,000').count()).to.equal(0);
    expect(tickets).to.equal(0);
    await context.close();
  });

  it("creates targets through the preview (shown as added) and the batch: a project's, and a market maker's with a session, Telegram and price scaling at 390 px by keyboard; the API lists them as previewed", async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.owner.email, w.password);
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
    await page.goto(`${base}/app/targets`);
    const panel = page.getByRole('region', { name: 'New target' });
    await panel.getByLabel('Exchange and pair').selectOption(`${w.ex2} ${spot2}`);
    await panel.getByLabel(/^Metric family/).selectOption('spread');
    await panel.getByLabel('Metric', { exact: true }).selectOption('spread/spread_bps');
    await panel.getByLabel('Threshold', { exact: true }).fill('25');
    await panel.getByRole('button', { name: 'Preview the new target' }).click();
    await panel.getByText('Added 1, modified 0, removed 0.').waitFor();
    expect((await panel.getByRole('list', { name: 'Changes' }).getByRole('listitem').allTextContents()).map((t) => t.trim())).to.deep.equal([`added: ${w.asset} ${w.ex2} ${spot2} spread/spread_bps — gb, below 25, all hours`]);
    // Nothing is saved by the preview.
    const spreadTargets = async () =>
      ((await call('GET', `/v2/organizations/targets/?metrics=spread/spread_bps&target_organizations=${w.project}`, { token })).body as { exchange: string; pair: string; threshold: number; direction: string }[]);
    expect(await spreadTargets()).to.deep.equal([]);
    await panel.getByRole('button', { name: 'Save' }).click();
    await panel.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const listed = await spreadTargets();
    expect(listed.map((t) => [t.exchange, t.pair, t.threshold, t.direction])).to.deep.equal([[w.ex2, spot2, 25, 'below']]);
    // The board asks again and shows it.
    await page.getByRole('region', { name: /^Unchecked/ }).getByRole('button', { name: new RegExp(`${w.asset} ${w.ex2} ${spot2.replace('/', '\\/')} spread/spread_bps`) }).waitFor();
    expect(await axeViolations(page)).to.deep.equal([]);
    // A market maker's target, on a phone's width, in the same session (an account's
    // sign-ins a minute are limited, and the owner signs in in most tests).
    await page.setViewportSize({ width: 390, height: 900 });
    // The market maker is offered: the API has named it to the owner (its mm target).
    await panel.getByLabel('Organization').selectOption({ label: `Maker ${w.tag} (market maker: mm)` });
    await panel.getByLabel('Asset').selectOption(w.asset);
    await panel.getByLabel('Exchange and pair').selectOption(`${w.ex} ${spot}`);
    await panel.getByLabel(/^Metric family \(mm\)/).selectOption('depth');
    await panel.getByLabel('Metric', { exact: true }).selectOption('depth/ask_5bps');
    await panel.getByLabel('Threshold', { exact: true }).fill('7500');
    await panel.getByLabel('Market hours').selectOption('market-hours');
    // A session is shown with the hours it is evaluated over (addendum section 5).
    expect(await panel.getByLabel('Market hours').locator('option:checked').textContent()).to.equal('market-hours: Mon-Fri 09:30-16:00');
    await panel.getByLabel('Telegram notifications').check();
    await panel.getByLabel('Scale the threshold').check();
    await panel.getByLabel('Scaling mode').selectOption('price');
    await panel.getByLabel('Price source').selectOption('manual');
    await panel.getByLabel('Reference price (USD)').fill('2.5');
    // Every control is reached with Tab, in order, and the form is sent with Enter.
    await panel.getByLabel('Organization').focus();
    const reached: string[] = [];
    for (let i = 0; i < 16; i++) {
      reached.push(await page.evaluate(() => {
        const el = document.activeElement as HTMLInputElement | null;
        return (el?.labels?.[0]?.textContent ?? el?.textContent ?? '').trim();
      }));
      await page.keyboard.press('Tab');
    }
    expect(reached.slice(0, reached.indexOf('Preview the new target') + 1)).to.deep.equal([
      'Organization', 'Asset', 'Exchange and pair', 'Metric family (mm)', 'Metric', 'Threshold', 'Direction', 'Market hours (America/New_York time)', 'Active', 'Telegram notifications',
      'Scale the threshold', 'Scaling mode', 'Price source', 'Reference price (USD)', 'Preview the new target',
    ]);
    await panel.getByRole('button', { name: 'Preview the new target' }).focus();
    await page.keyboard.press('Enter');
    await panel.getByText('Added 1, modified 0, removed 0.').waitFor();
    expect((await panel.getByRole('list', { name: 'Changes' }).getByRole('listitem').allTextContents()).map((t) => t.trim())).to.deep.equal([
      `added: ${w.asset} ${w.ex} ${spot} depth/ask_5bps — mm, above 7,500, market-hours, scaled (price, manual, reference 2.5), Telegram`,
    ]);
    const makerTargets = async () => ((await call('GET', `/v2/organizations/targets/?metrics=depth/ask_5bps&target_organizations=${w.mm}`, { token })).body as Record<string, unknown>[]);
    expect(await makerTargets()).to.deep.equal([]);
    expect(await axeViolations(page)).to.deep.equal([]);
    await screenshot(page, 'targets-new-phone');
    await panel.getByRole('button', { name: 'Save' }).focus();
    await page.keyboard.press('Enter');
    await panel.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const [t, ...more] = await makerTargets();
    expect(more).to.deep.equal([]);
    expect({ ...t, organization: (t!.organization as { slug: string }).slug }).to.deep.include({
      type: 'mm', organization: w.mm, asset: w.asset, exchange: w.ex, pair: spot, metric: 'depth/ask_5bps', threshold: 7500, direction: 'above', market_hours: 'market-hours',
      active: true, telegram_notifications: true, scaling_enabled: true, scaling_mode: 'price', scaling_source: 'manual', scaling_reference_price: 2.5,
    });
    await context.close();
  });

  /** The API's words the page shows for a control: its description (aria-describedby), once it is marked invalid. */
  const wordsAt = async (control: ReturnType<Page['getByLabel']>) => {
    await control.page().waitForFunction((el) => el?.getAttribute('aria-invalid') === 'true', await control.elementHandle());
    return control.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby')!)!.textContent);
  };

  it("shows the API's own words at the field they name: a percentage over 100, scaling without a reference price, an organization the user does not manage", async () => {
    const { context, page } = await newPage(browser, problems);
    // Staff, who manage every organization's targets and see every request: the owner signs in
    // in most other tests, and an account's sign-ins a minute are limited.
    await signIn(page, base, w.users.staff.email, w.password);
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
    await page.goto(`${base}/app/targets`);
    const panel = page.getByRole('region', { name: 'New target' });
    const preview = panel.getByRole('button', { name: 'Preview the new target' });
    const target = { organization: w.project, asset: w.asset, exchange: w.ex, pair: spot, metric: 'uptime/spread/10bps' };
    const apiWords = (t: Record<string, unknown>) =>
      call('POST', '/v2/organizations/targets/preview/', { token, json: { scopes: [{ organization: t.organization, asset: t.asset, metrics: [t.metric] }], targets: [t] } });
    await panel.getByLabel('Organization').selectOption({ label: `Project ${w.tag} (project: gb)` });
    await panel.getByLabel('Exchange and pair').selectOption(`${w.ex} ${spot}`);
    await panel.getByLabel(/^Metric family/).selectOption('uptime/spread');
    await panel.getByLabel('Metric', { exact: true }).selectOption(target.metric);
    await panel.getByLabel('Threshold', { exact: true }).fill('150');
    await preview.click();
    const percent = await apiWords({ ...target, threshold: 150 });
    expect(percent.status).to.equal(400);
    expect(await wordsAt(panel.getByLabel('Threshold', { exact: true }))).to.equal(percent.body.targets[0].threshold.join(' '));

    await panel.getByLabel('Threshold', { exact: true }).fill('90');
    await panel.getByLabel('Scale the threshold').check();
    await preview.click();
    const noReference = await apiWords({ ...target, threshold: 90, scaling_enabled: true, scaling_mode: 'price', scaling_source: 'manual' });
    expect(noReference.status).to.equal(400);
    expect(await wordsAt(panel.getByLabel('Reference price (USD)'))).to.equal(noReference.body.targets[0].scaling_reference_price.join(' '));
    expect(await panel.getByLabel('Threshold', { exact: true }).getAttribute('aria-invalid')).to.equal(null);

    await panel.getByLabel('Scale the threshold').uncheck();
    await panel.getByLabel('Organization').selectOption({ label: 'Another market maker…' });
    await panel.getByLabel("Market maker's slug").fill(`nobody-${w.tag}`);
    await preview.click();
    const unknown = await apiWords({ ...target, organization: `nobody-${w.tag}`, threshold: 90 });
    expect(unknown.status).to.equal(403);
    expect(await wordsAt(panel.getByLabel("Market maker's slug"))).to.equal(unknown.body.detail);
    expect(await axeViolations(page)).to.deep.equal([]);
    // The browser logs the 400s and the 403 itself as failed resource loads: not errors of the app.
    problems.console = problems.console.filter((m) => !/status of 40[03]/.test(m));
    await context.close();
  });

  it('changes a target (threshold, evaluated, Telegram) and removes it, each through the preview; the API holds what was saved', async () => {
    const { context, page } = await newPage(browser, problems);
    await signIn(page, base, w.users.staff.email, w.password);
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
    const key = { organization: w.project, asset: w.asset, exchange: w.ex2, pair: spot2, metric: 'top_of_book/bid_amount' };
    const made = await call('POST', '/v2/organizations/targets/batch/', { token, json: { delete_ids: [], create_targets: [{ ...key, threshold: 40 }] } });
    expect(made.status, made.text).to.equal(201);
    const listed = async () =>
      ((await call('GET', `/v2/organizations/targets/?${new URLSearchParams({ target_assets: w.asset, exchanges: w.ex2, metrics: key.metric })}`, { token })).body as Record<string, any>[]).filter((t) => t.pair === spot2 && t.organization.slug === w.project);
    await page.goto(`${base}/app/targets?target=${made.body[0].id}`);
    const panel = page.getByRole('region', { name: 'Change the target' });
    expect(await panel.getByLabel('Threshold').inputValue()).to.equal('40');
    expect(await panel.getByLabel('Evaluated (active)').isChecked()).to.equal(true);
    await panel.getByLabel('Threshold').fill('35');
    await panel.getByLabel('Evaluated (active)').uncheck();
    await panel.getByRole('button', { name: 'Preview the change' }).click();
    await panel.getByText('Added 0, modified 1, removed 0.').waitFor();
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    const [changed] = await waitFor('the change saved', async () => {
      const l = await listed();
      return l.length === 1 && l[0]!.id !== made.body[0].id && l;
    });
    expect([changed!.threshold, changed!.active, changed!.telegram_notifications]).to.deep.equal([35, false, false]);
    // Shown in its place: the saved target (a new id), its form as saved.
    await page.getByRole('status').filter({ hasText: `Saved: target ${changed!.id} replaces target ${made.body[0].id}.` }).waitFor();
    await page.waitForURL(new RegExp(`target=${changed!.id}$`));
    await page.getByRole('region', { name: new RegExp(`^Target ${changed!.id}:`) }).waitFor();
    expect(await panel.getByLabel('Threshold').inputValue()).to.equal('35');
    await panel.getByRole('button', { name: 'Preview removing it' }).click();
    await panel.getByText('Added 0, modified 0, removed 1.').waitFor();
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: `Target ${changed!.id} removed.` }).waitFor();
    expect(new URL(page.url()).searchParams.has('target')).to.equal(false);
    expect(await listed()).to.deep.equal([]);
    expect(await axeViolations(page)).to.deep.equal([]);
    await context.close();
  });

  it("shows what changed between a proposal's revisions and between the request's versions, as the API's versions answer them", async () => {
    const { context, page } = await newPage(browser, problems);
    // Staff, who manage every organization's targets and see every request: the owner signs in
    // in most other tests, and an account's sign-ins a minute are limited.
    await signIn(page, base, w.users.staff.email, w.password);
    const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
    await page.goto(`${base}/app/rfq?rfq=${made.rfq}`);
    // Opened by keyboard.
    const open = page.getByRole('button', { name: `Revisions of Maker ${w.tag}` });
    await open.focus();
    await page.keyboard.press('Enter');
    expect(await open.getAttribute('aria-expanded')).to.equal('true');
    const revisions = page.getByRole('list', { name: `Versions of Maker ${w.tag}'s proposal` });
    await revisions.getByText('Version 2').waitFor();
    const versions = (await call('GET', `/v2/organizations/rfqs/${made.rfq}/proposals/${made.proposal}/versions/`, { token })).body as { version: number; loan: { tranches: { strike_price: number }[] } }[];
    expect(versions.map((v) => v.version)).to.deep.equal([1, 2]);
    const changes = revisions.getByRole('list', { name: 'Changes in version 2' }).getByRole('listitem');
    expect((await changes.allTextContents()).map((t) => t.trim())).to.deep.equal([`loan.tranches[0].strike_price: ${versions[0]!.loan.tranches[0]!.strike_price} → ${versions[1]!.loan.tranches[0]!.strike_price}`]);

    const rfqVersions = (await call('GET', `/v2/organizations/rfqs/${made.rfq}/versions/`, { token })).body as { version: number; status: string }[];
    const request = page.getByRole('list', { name: 'Versions of the request' });
    const last = rfqVersions.at(-1)!;
    const before = rfqVersions.at(-2)!;
    await request.getByRole('list', { name: `Changes in version ${last.version}` }).getByText(`status: ${before.status} → ${last.status}`).waitFor();
    expect(await request.locator(':scope > li').count()).to.equal(rfqVersions.length);
    expect(await axeViolations(page)).to.deep.equal([]);
    await screenshot(page, 'rfq');
    await context.close();
  });

  it('adds a passkey on the Account view and signs in with it (a virtual authenticator)', async () => {
    // WebAuthn ties a passkey to the page's origin: a second API on the same service, whose
    // WebAuthn origin is the address the browser opens (the test service's is the default).
    const port = await freePort();
    const origin = `http://localhost:${port}`;
    const deps = testStack().service.deps;
    const api = await startApi({ ...deps, config: { ...deps.config, webauthnRpId: 'localhost', webauthnOrigin: origin } }, '127.0.0.1', port);
    const { context, page } = await newPage(browser, problems);
    try {
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
      });
      await signIn(page, origin, w.users.loner.email, w.password);
      const passwordToken = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
      await page.getByRole('link', { name: 'Account' }).click();
      const add = page.getByRole('form', { name: 'Add a passkey' });
      await add.getByLabel('Password').fill(w.password);
      await add.getByLabel('Passkey name').fill(`laptop ${w.tag}`);
      await add.getByRole('button', { name: 'Add a passkey' }).click();
      await add.getByRole('status').filter({ hasText: 'Passkey added.' }).waitFor();
      const registered = await call('GET', '/v1/user/passkeys/', { token: passwordToken });
      expect(registered.body.map((p: { name: string }) => p.name)).to.deep.equal([`laptop ${w.tag}`]);
      // Listed, with the button that removes it.
      await page.getByRole('table', { name: 'Passkeys' }).getByRole('button', { name: `Remove laptop ${w.tag}` }).waitFor();

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      const passkeyToken = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
      expect(passkeyToken).to.not.equal(passwordToken);
      const signedIn = await call('GET', '/v1/session/', { token: passkeyToken });
      expect(signedIn.status).to.equal(200);
      expect(signedIn.body.user.email).to.equal(w.users.loner.email);
      const used = await call('GET', '/v1/user/passkeys/', { token: passkeyToken });
      expect(used.body[0].last_used_at).to.be.a('string');
    } finally {
      await context.close();
      await api.close();
    }
  });

  it("manages the account: two-factor turned on with the QR code's key, an API key made (shown once) and revoked, two-factor off, the password changed", async () => {
    const email = w.users.loner.email;
    let secret = '';
    const code = codesOf(() => secret);
    const { context, page } = await newPage(browser, problems);
    try {
      await signIn(page, base, email, w.password);
      const token = (await page.evaluate(() => sessionStorage.getItem('mm-metrics.token')))!;
      const enabled = async () => (await call('GET', '/v1/totp/', { token })).body.enabled as boolean;
      await page.getByRole('link', { name: 'Account' }).click();

      // Two-factor on: the key shown beside the QR code is the one the API checks codes against.
      const setup = page.getByRole('form', { name: 'Set up two-factor authentication' });
      await setup.getByText('Off: signing in asks for the password only.').waitFor();
      await setup.getByLabel('Password').fill(w.password);
      await setup.getByRole('button', { name: 'Set up two-factor authentication' }).click();
      const confirm = page.getByRole('form', { name: 'Confirm two-factor authentication' });
      expect(await confirm.getByRole('img', { name: 'QR code of the two-factor key' }).getAttribute('src')).to.match(/^data:image\/svg\+xml;/);
      secret = (await confirm.locator('code').textContent())!;
      expect(secret).to.match(/^[A-Z2-7]{32}$/);
      expect(await enabled()).to.equal(false);
      await confirm.getByLabel('Authentication code').fill(await code());
      await confirm.getByRole('button', { name: 'Turn two-factor authentication on' }).click();
      await page.getByRole('status').filter({ hasText: 'Two-factor authentication is on' }).waitFor();
      expect(await enabled()).to.equal(true);

      // An API key: its secret shown once, working as the API documents; listed; revoked.
      const form = page.getByRole('form', { name: 'New API key' });
      await form.getByLabel('Key name').fill(`ci ${w.tag}`);
      await form.getByLabel('Password').fill(w.password);
      await form.getByLabel('Authentication code').fill(await code());
      await form.getByRole('button', { name: 'Make the API key' }).click();
      const key = (await page.getByRole('region', { name: 'The new API key' }).locator('code').textContent())!;
      const withKey = await call('GET', '/v1/organizations/', { authorization: `Api-Key ${key}` });
      expect(withKey.status).to.equal(200);
      const listed = (await call('GET', '/v1/user/api-keys/', { token })).body as { name: string; prefix: string; scopes: string[] }[];
      expect(listed.map((k) => [k.name, k.scopes])).to.deep.equal([[`ci ${w.tag}`, ['metrics:read']]]);
      expect(key.startsWith(listed[0]!.prefix)).to.equal(true);
      const row = page.getByRole('table', { name: 'API keys' }).getByRole('row', { name: new RegExp(`ci ${w.tag}`) });
      expect(await row.getByRole('cell').allTextContents()).to.include.members([listed[0]!.prefix, 'metrics:read']);
      await screenshot(page, 'account');
      await row.getByRole('button', { name: `Revoke ci ${w.tag}` }).click();
      await row.getByRole('button', { name: `Yes, revoke ci ${w.tag}` }).click();
      await page.getByText('No API keys.').waitFor();
      expect(await page.getByRole('region', { name: 'The new API key' }).count(), 'a revoked key no longer shown').to.equal(0);
      expect((await call('GET', '/v1/organizations/', { authorization: `Api-Key ${key}` })).status).to.equal(401);

      // Two-factor off.
      const off = page.getByRole('form', { name: 'Turn two-factor authentication off' });
      await off.getByLabel('Password').fill(w.password);
      await off.getByLabel('Authentication code').fill(await code());
      await off.getByRole('button', { name: 'Turn two-factor authentication off' }).click();
      await page.getByRole('status').filter({ hasText: 'Two-factor authentication is off' }).waitFor();
      expect(await enabled()).to.equal(false);

      // The password: the API's words for a weak one, then changed; this sign-in stays.
      const change = page.getByRole('form', { name: 'Change the password' });
      await change.getByLabel('Current password').fill(w.password);
      await change.getByLabel(/^New password/).fill('1234567890');
      await change.getByRole('button', { name: 'Change the password' }).click();
      const weak = await call('POST', '/v1/user/password/', { token, json: { old_password: w.password, new_password: '1234567890' } });
      expect(weak.status).to.equal(400);
      expect(await change.getByRole('alert').textContent()).to.contain(weak.body.new_password[0]);
      const next = `${w.password}-next`;
      await change.getByLabel('Current password').fill(w.password);
      await change.getByLabel(/^New password/).fill(next);
      await change.getByRole('button', { name: 'Change the password' }).click();
      await change.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
      expect((await call('POST', '/v1/login/', { json: { email, password: w.password } })).status).to.equal(400);
      expect((await call('POST', '/v1/login/', { json: { email, password: next } })).status).to.equal(200);
      expect((await call('GET', '/v1/session/', { token })).status).to.equal(200);
      // Back, for any later sign-in of this user.
      expect((await call('POST', '/v1/user/password/', { token, json: { old_password: next, new_password: w.password } })).status).to.equal(204);
      expect(await axeViolations(page)).to.deep.equal([]);
      // The browser logs the weak password's 400 itself as a failed resource load: not an error of the app.
      problems.console = problems.console.filter((m) => !/\/app\/account: .*status of 400/.test(m));
    } finally {
      await context.close();
    }
  });

  it('no page logged an error', () => {
    expect(problems.console).to.deep.equal([]);
  });
});
