// The embedded engine's allocator runs with the options lib/embedded-allocator.ts sets
// before chdb loads: were chdb loaded first (an import moved above it), jemalloc would keep
// ClickHouse's defaults, and nothing else would tell.
import { expect } from 'chai';
import { EMBEDDED_ALLOCATOR_CONF } from '../../lib/embedded-allocator.ts';
import { testStack } from '../support/stack.ts';

describe('the embedded engine allocator', () => {
  it("runs with the options set before the engine loaded, or the operator's own", async () => {
    const { config, service } = testStack();
    if (config.clickhouseUrl) return; // a server's allocator is its operator's
    const [row] = await service.deps.ch.query<{ stats: string }>('SELECT stats FROM system.jemalloc_stats');
    const stats = row!.stats;
    const conf = process.env.JE_MALLOC_CONF;
    expect(conf, 'set before the engine loaded').to.be.a('string');
    expect(stats).to.include(`Environment variable MALLOC_CONF: "${conf}"`);
    if (conf !== EMBEDDED_ALLOCATOR_CONF) return; // the operator's: jemalloc read it, as checked
    // Each option in force, as jemalloc reports it (a word option quoted).
    for (const [name, value] of conf.split(',').map((o) => o.split(':'))) expect(stats).to.match(new RegExp(`opt\\.${name}: "?${value}\\b`));
  });
});
