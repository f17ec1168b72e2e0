// The browser the web app's tests drive: Debian's Chromium (installed by ops/bootstrap.mjs)
// through playwright-core, one browser for a test file, a context per signed-in user.
// Console errors and page errors of every page are collected, so a test can say none came.
import { AxeBuilder } from '@axe-core/playwright';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
// The machine's network is closed and the tests need nothing of Chromium's own services.
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../docs/screenshots');

/** Playwright's launch starts Chromium with a new empty --user-data-dir of its own. */
export async function launch(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: npm test installs it (apt-get install chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

export interface Problems {
  console: string[];
}

export async function newPage(browser: Browser, problems: Problems, width = 1280): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, acceptDownloads: true, locale: 'en-US', timezoneId: 'UTC' });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.console.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.console.push(`${page.url()}: ${e.message}`));
  return { context, page };
}

/** Serious or critical accessibility violations on the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  const r = await new AxeBuilder({ page }).analyze();
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Signs in through the form, with the two-factor step when a code is given. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string, code?: () => Promise<string>): Promise<void> {
  await page.goto(`${baseUrl}/app/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  if (code) {
    await page.getByLabel('Authentication code').fill(await code());
    await page.getByRole('button', { name: 'Verify' }).click();
  }
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
