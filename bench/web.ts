// bench:web — the web app's speed, measured in Chromium against a running service:
//   npm run bench:web -- --url http://127.0.0.1:8080 --email owner@acme.example --password demo-password --asset ACME
// Loads the Markets view of one asset once to warm up, then 20 more times, each timed in the
// browser from navigation start until every chart of the view has drawn; prints p50 and
// p95. Also prints the gzipped size of the first view's JavaScript (index.html's script).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { ensureWebBuild, WEB_DIST } from '../ops/web-build.ts';
import { launch } from '../test/web/browser.ts';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    email: { type: 'string', default: 'owner@acme.example' },
    password: { type: 'string', default: 'demo-password' },
    asset: { type: 'string', default: 'ACME' },
    loads: { type: 'string', default: '20' },
  },
});
const loads = Number(values.loads);

await ensureWebBuild();
const html = fs.readFileSync(path.join(WEB_DIST, 'index.html'), 'utf8');
const entry = /src="\/app\/(assets\/[^"]+\.js)"/.exec(html)![1]!;
const gz = zlib.gzipSync(fs.readFileSync(path.join(WEB_DIST, entry))).length;
process.stdout.write(`first view's JavaScript: ${(gz / 1024).toFixed(1)} kB gzipped (${entry}; goal 350 kB)\n`);

const browser = await launch();
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${values.url}/app/`);
  await page.getByLabel('Email').fill(values.email!);
  await page.getByLabel('Password').fill(values.password!);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  const target = `${values.url}/app/markets?asset=${encodeURIComponent(values.asset!)}&lookback=1-day&interval=1h&bps=10`;
  const times: number[] = [];
  for (let i = 0; i <= loads; i++) {
    await page.goto(target);
    // Every chart panel of the view holds a drawn canvas.
    await page.waitForFunction(() => {
      const charts = [...document.querySelectorAll('.chart')];
      return charts.length >= 6 && charts.every((c) => c.querySelector('canvas')) && !document.querySelector('[role="status"]');
    }, undefined, { timeout: 60_000 });
    const ms = await page.evaluate(() => performance.now());
    if (i > 0) times.push(ms);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]!;
  process.stdout.write(`Markets view of ${values.asset}, charts drawn after navigation, ${loads} warm loads: p50 ${at(0.5).toFixed(0)} ms, p95 ${at(0.95).toFixed(0)} ms (goal p95 1000 ms)\n`);
} finally {
  await browser.close();
}
