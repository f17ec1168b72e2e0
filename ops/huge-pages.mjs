// The environment every command's Node process starts with (ops/bootstrap.mjs), for its
// memory: glibc's allocator (Node's own, and its ArrayBuffers') asks the kernel for huge
// pages where the system gives them on request (transparent huge pages in `madvise` mode,
// Debian's default), so touching fresh memory faults once per 2 MiB instead of once per
// 4 KiB. A market-maker answer over a month fills hundreds of MiB anew; on the 2-core
// virtual machine a page fault cost about 16 µs (docs/benchmarks.md, "Measurements behind
// the code"). glibc reads its tunables when the process starts, so they are set for the
// child, not by it. The embedded engine's allocator is set the same way in
// lib/embedded-allocator.ts. Plain JavaScript: bootstrap runs it before anything is installed.

/** glibc's tunable for huge pages in malloc (glibc 2.35 on; older ones and musl ignore it). */
export const HUGE_PAGES_TUNABLE = 'glibc.malloc.hugetlb';

/**
 * `env` with glibc's huge-page tunable on, added to the tunables already there; an
 * operator's own setting of it (`glibc.malloc.hugetlb=0` turns it off) left as it is.
 */
export function withHugePages(env) {
  const tunables = env.GLIBC_TUNABLES ?? '';
  if (tunables.split(':').some((t) => t.startsWith(`${HUGE_PAGES_TUNABLE}=`))) return env;
  return { ...env, GLIBC_TUNABLES: tunables ? `${tunables}:${HUGE_PAGES_TUNABLE}=1` : `${HUGE_PAGES_TUNABLE}=1` };
}
