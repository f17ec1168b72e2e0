// npm run test:node [-- 22 24]: the smoke check (ops/cli/smoke.ts: start, load a fixture,
// sign in, stop) on the newest release of each Node line given, 22 and 24 by default. Each
// Node comes from the npm registry's node-<platform>-<arch> package, kept under .cache/node/.
// The dependencies installed for the Node that runs npm serve them all: the native ones
// (argon2, chdb) use Node-API, which does not change between Node versions.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = path.join(root, '.cache', 'node');
const say = (msg) => process.stderr.write(`[test:node] ${msg}\n`);
const pkg = `node-${process.platform}-${process.arch}`;

function npm(args) {
  const r = spawnSync('npm', args, { cwd: cache, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} failed:\n${r.stderr}`);
  return r.stdout.trim();
}

const newer = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i];
  return false;
};

/** The node binary of the newest release of a line, fetched once. */
function nodeOf(major) {
  const listed = JSON.parse(npm(['view', `${pkg}@${major}`, 'version', '--json']));
  const versions = (Array.isArray(listed) ? listed : [listed]).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
  if (versions.length === 0) throw new Error(`no release of Node ${major} in ${pkg}`);
  const version = versions.reduce((a, b) => (newer(b, a) ? b : a));
  const dir = path.join(cache, version);
  const bin = path.join(dir, 'package', 'bin', 'node');
  if (!fs.existsSync(bin)) {
    say(`fetching ${pkg}@${version}...`);
    fs.mkdirSync(dir, { recursive: true });
    const file = npm(['pack', `${pkg}@${version}`, '--pack-destination', dir, '--silent']).split('\n').pop();
    const r = spawnSync('tar', ['-xzf', path.join(dir, file), '-C', dir], { stdio: 'inherit' });
    if (r.status !== 0 || !fs.existsSync(bin)) throw new Error(`unpacking ${file} gave no ${bin}`);
    fs.rmSync(path.join(dir, file));
  }
  return bin;
}

const majors = process.argv.slice(2).filter((a) => /^\d+$/.test(a));
fs.mkdirSync(cache, { recursive: true });
const results = [];
for (const major of majors.length > 0 ? majors : ['22', '24']) {
  let ok = false;
  try {
    const node = nodeOf(major);
    const r = spawnSync(node, ['--import', 'tsx', 'ops/cli/smoke.ts'], { cwd: root, stdio: 'inherit', timeout: 180_000 });
    ok = r.status === 0;
  } catch (e) {
    say(e.message);
  }
  results.push(`Node ${major}: ${ok ? 'ok' : 'FAILED'}`);
}
say(results.join(', '));
process.exit(results.every((r) => r.endsWith('ok')) ? 0 : 1);
