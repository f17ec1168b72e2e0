// Builds the web app (web/ -> web/dist) when its build is missing or older than any of its
// sources, for `npm start`, `npm run demo`, the browser tests and bench:web. The build goes
// to a folder of its own and replaces web/dist in one rename, so a service serving the old
// build never reads half of a new one, and two commands building at once do not collide.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../lib/log.ts';

const WEB = fileURLToPath(new URL('../web/', import.meta.url));
export const WEB_DIST = path.join(WEB, 'dist');
const ROOT = path.resolve(WEB, '..');
/** What a build is made of besides web/src: a change to any of them makes the build stale (the domain's facts are the metric and session lists the Targets view offers). */
const INPUTS = [
  path.join(WEB, 'index.html'),
  path.join(WEB, 'vite.config.ts'),
  path.join(WEB, 'public'),
  path.join(WEB, 'src'),
  path.join(ROOT, 'api', 'client'),
  path.join(ROOT, 'domain', 'market', 'facts.ts'),
  path.join(ROOT, 'domain', 'targets', 'facts.ts'),
  path.join(ROOT, 'package-lock.json'),
];

function newestMtime(p: string): number {
  const stat = fs.statSync(p, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of fs.readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, entry)));
  return newest;
}

export function webBuildIsStale(): boolean {
  const built = fs.statSync(path.join(WEB_DIST, 'index.html'), { throwIfNoEntry: false });
  if (!built) return true;
  return Math.max(...INPUTS.map(newestMtime)) > built.mtimeMs;
}

/** Builds web/dist when it is missing or stale; returns whether it built. */
export async function ensureWebBuild(log?: Logger): Promise<boolean> {
  if (!webBuildIsStale()) return false;
  log?.info('building the web app (web/ -> web/dist)');
  const { build } = await import('vite');
  const staging = path.join(WEB, `.dist-${process.pid}-${Date.now()}`);
  try {
    await build({ configFile: path.join(WEB, 'vite.config.ts'), logLevel: 'warn', build: { outDir: staging, emptyOutDir: true } });
    const old = path.join(WEB, `.dist-old-${process.pid}-${Date.now()}`);
    if (fs.existsSync(WEB_DIST)) fs.renameSync(WEB_DIST, old);
    fs.renameSync(staging, WEB_DIST);
    fs.rmSync(old, { recursive: true, force: true });
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return true;
}
