// Every command's Node starts with glibc's huge-page tunable (ops/huge-pages.mjs, set by
// ops/bootstrap.mjs): checked on what it adds to an environment, and on a Node started with
// it, whose fresh memory then lies in huge pages where the kernel gives them on request.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { HUGE_PAGES_TUNABLE, withHugePages } from '../../ops/huge-pages.mjs';

/** The KiB of huge pages backing a Node started with `env` after it wrote a fresh 64 MiB. */
function hugeKiBAfterWriting(env: NodeJS.ProcessEnv): number {
  const script = `const b = Buffer.allocUnsafeSlow(64 * 2 ** 20); b.fill(1);
    const m = /AnonHugePages:\\s+(\\d+) kB/.exec(require('node:fs').readFileSync('/proc/self/smaps_rollup', 'utf8'));
    process.stdout.write(m ? m[1] : '0');`;
  return Number(execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' }));
}

describe('huge pages for Node', () => {
  it('adds the tunable to those set, and leaves an operator\'s own setting of it', () => {
    expect(withHugePages({}).GLIBC_TUNABLES).to.equal(`${HUGE_PAGES_TUNABLE}=1`);
    expect(withHugePages({ GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=1' }).GLIBC_TUNABLES).to.equal(`glibc.malloc.trim_threshold=1:${HUGE_PAGES_TUNABLE}=1`);
    const off = { GLIBC_TUNABLES: `${HUGE_PAGES_TUNABLE}=0`, PATH: '/bin' };
    expect(withHugePages(off)).to.deep.equal(off);
  });

  it('puts fresh memory in huge pages where the kernel gives them on request, and only then', () => {
    // A kernel built without transparent huge pages has no such file: it never gives them.
    const setting = '/sys/kernel/mm/transparent_hugepage/enabled';
    const mode = fs.existsSync(setting) ? /\[(\w+)\]/.exec(fs.readFileSync(setting, 'utf8'))?.[1] : 'never';
    const withIt = hugeKiBAfterWriting(withHugePages({ ...process.env, GLIBC_TUNABLES: '' }));
    const without = hugeKiBAfterWriting({ ...process.env, GLIBC_TUNABLES: `${HUGE_PAGES_TUNABLE}=0` });
    if (mode === 'never') {
      expect(withIt, 'no huge pages given').to.equal(0);
      return;
    }
    expect(withIt, `with the tunable (huge pages: ${mode})`).to.be.greaterThan(0);
    // Given only when asked for (madvise, Debian's default), they are there because of it.
    if (mode === 'madvise') expect(without, 'without it').to.equal(0);
  });
});
