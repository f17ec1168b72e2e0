// The embedded engine's memory allocator (the jemalloc inside chdb), set before chdb loads:
// lib/clickhouse.ts imports this ahead of chdb, as jemalloc reads its options once, when the
// library first allocates.
//
// ClickHouse's defaults give freed memory back to the system within seconds, and a block
// of 64 MiB or more at once, so a month's read touched most of its memory anew each time:
// a page fault a page, microseconds each on the virtual machines this runs on
// (docs/benchmarks.md, "Measurements behind the code"). Freed pages are kept a minute
// instead, whatever their size; the engine's memory worker still purges when memory runs
// short. Its memory is asked in huge pages, where the system gives them on request
// (transparent huge pages in `madvise` mode, Debian's default): a first touch then faults
// once per 2 MiB, not per 4 KiB (Node's own allocator likewise: ops/huge-pages.mjs). A
// JE_MALLOC_CONF the operator sets is left as it is.

/** The engine allocator's options, in jemalloc's MALLOC_CONF syntax. */
export const EMBEDDED_ALLOCATOR_CONF = 'dirty_decay_ms:60000,muzzy_decay_ms:0,oversize_threshold:0,thp:always';

process.env.JE_MALLOC_CONF ??= EMBEDDED_ALLOCATOR_CONF;
