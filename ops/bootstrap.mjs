#!/usr/bin/env node
// Entry point of every npm script. Plain JavaScript, so it runs on a fresh clone before
// anything is installed: it installs what is missing (system packages on Debian, then the
// npm dependencies), then runs the TypeScript command through tsx.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withHugePages } from './huge-pages.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => process.stderr.write(`[bootstrap] ${msg}\n`);

const COMMANDS = {
  demo: ['ops/cli/demo.ts'],
  start: ['ops/cli/start.ts'],
  seed: ['ops/cli/seed.ts'],
  replay: ['ingest/replay.ts'],
  'ops:replay': ['ops/cli/replay-topic.ts'],
  // The whole suite in two runs at once (ops/test-suite.ts); with files named, just those.
  test: ['ops/test-suite.ts'],
  // The pure tests: no stack, so neither .mocharc.cjs (whose hooks start it) nor system packages.
  'test:unit': ['node_modules/mocha/bin/mocha.js', '--no-config', '--node-option', 'import=tsx', '--timeout', '10000', 'test/unit/**/*.test.ts'],
  'test:node': ['ops/node-versions.mjs'],
  'bench:ingest': ['bench/ingest.ts'],
  'bench:api': ['bench/api.ts'],
  'bench:api-scale': ['bench/api-scale.ts'],
  'bench:engine-scale': ['bench/engine-scale.ts'],
  'bench:targets': ['bench/targets.ts'],
  'bench:market-makers': ['bench/market-makers.ts'],
  'bench:load': ['bench/load.ts'],
  'bench:insert': ['bench/insert-encoding.ts'],
  'bench:windows': ['bench/minute-windows.ts'],
  'bench:web': ['bench/web.ts'],
  'bench:stream': ['bench/stream.ts'],
};
// Commands that drive Debian's Chromium (the web app's browser tests, its benchmark).
const BROWSER_COMMANDS = new Set(['test', 'demo', 'bench:web']);
// Commands that run no part of the stack, so need none of the system packages.
const PURE_COMMANDS = new Set(['test:unit']);

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.status !== 0) {
    say(`failed: ${cmd} ${args.join(' ')}`);
    process.exit(r.status ?? 1);
  }
}

function ensureSystemPackages() {
  if (PURE_COMMANDS.has(name)) return;
  // What the stack runs besides Node: a JRE and Maven for Kafka, redis-server for Redis,
  // Chromium for the commands that drive a browser.
  const wanted = [
    ['java', 'openjdk-17-jre-headless'],
    ['mvn', 'maven'],
    ['redis-server', 'redis-server'],
    ...(BROWSER_COMMANDS.has(name) ? [['chromium', 'chromium']] : []),
  ].filter(([cmd]) => !has(cmd));
  if (wanted.length === 0) return;
  const pkgs = wanted.map(([, pkg]) => pkg);
  if (!has('apt-get')) {
    say(`missing ${wanted.map(([c]) => c).join(', ')}; install ${pkgs.join(' ')} with your package manager`);
    process.exit(1);
  }
  const asRoot = process.getuid?.() === 0;
  const aptGet = (...a) =>
    run(asRoot ? 'apt-get' : 'sudo', asRoot ? a : ['apt-get', ...a], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  say(`installing ${pkgs.join(' ')} with apt-get...`);
  aptGet('update', '-q');
  aptGet('install', '-y', '-q', '--no-install-recommends', ...pkgs);
}

function ensureNodeModules() {
  const lock = path.join(root, 'package-lock.json');
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const stale = !fs.existsSync(marker) || (fs.existsSync(lock) && fs.statSync(lock).mtimeMs > fs.statSync(marker).mtimeMs + 1000);
  if (!stale) return;
  say('installing npm dependencies (first run takes a minute)...');
  // install, not ci: it honours the lock file and also mends a node_modules left half-done.
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error']);
}

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  say(`Node ${process.versions.node} is too old: this project needs Node 20.19 or newer`);
  process.exit(1);
}

const [name, ...args] = process.argv.slice(2);
const command = COMMANDS[name];
if (!command) {
  say(`unknown command "${name}"; one of: ${Object.keys(COMMANDS).join(', ')}`);
  process.exit(2);
}
ensureSystemPackages();
ensureNodeModules();

// Node's allocator in huge pages (ops/huge-pages.mjs): glibc reads it as the child starts.
const child = spawn(process.execPath, ['--import', 'tsx', ...command, ...args], { stdio: 'inherit', cwd: root, env: withHugePages(process.env) });
// Ctrl-C reaches the whole foreground process group; the child stops what it started.
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
