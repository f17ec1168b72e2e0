// The API's reads go through the engine's cache of decompressed blocks; ingestion's do not
// (lib/clickhouse.ts, OpenOptions.uncompressedCache; UNCOMPRESSED_CACHE_MB).
import { expect } from 'chai';
import { openClickHouse } from '../../lib/clickhouse.ts';
import { silentLogger } from '../../lib/log.ts';
import { API_CLICKHOUSE, INGEST_CLICKHOUSE } from '../../ops/service.ts';
import { testStack } from '../support/stack.ts';

describe('the uncompressed cache of the API reads', () => {
  it('is asked for by the API connection only, and on the embedded engine a repeated read is served from it', async () => {
    const { config } = testStack();
    const api = openClickHouse(config, 'ucache-api', { ...API_CLICKHOUSE, log: silentLogger });
    const ingest = openClickHouse(config, 'ucache-ingest', { ...INGEST_CLICKHOUSE, log: silentLogger });
    try {
      const setting = async (ch: typeof api) => Number((await ch.query<{ v: string }>("SELECT getSetting('use_uncompressed_cache') AS v"))[0]!.v);
      expect(await setting(api)).to.equal(1);
      expect(await setting(ingest)).to.equal(0);
      if (config.clickhouseUrl) return; // a server's cache is its operator's (uncompressed_cache_size)

      const size = await ingest.query<{ v: string }>("SELECT value AS v FROM system.server_settings WHERE name = 'uncompressed_cache_size'");
      expect(Number(size[0]!.v)).to.equal(config.uncompressedCacheBytes);
      await ingest.command('CREATE TABLE IF NOT EXISTS test_ucache (k UInt32, v Float64) ENGINE = MergeTree ORDER BY k');
      await ingest.command('TRUNCATE TABLE test_ucache');
      await ingest.command('INSERT INTO test_ucache SELECT number, number / 3 FROM numbers(100000)');
      const hits = async () => Number((await ingest.query<{ n: string }>("SELECT sum(value) AS n FROM system.events WHERE event = 'UncompressedCacheHits'"))[0]!.n);
      const read = (ch: typeof api) => ch.query<{ s: number }>('SELECT sum(v) AS s FROM test_ucache WHERE k BETWEEN {lo:UInt32} AND {hi:UInt32}', { lo: 5000, hi: 9000 });

      const [first] = await read(api);
      const afterFirst = await hits();
      const [second] = await read(api);
      expect(await hits()).to.be.greaterThan(afterFirst, 'the second API read finds the blocks the first left');
      expect(second!.s).to.equal(first!.s);
    } finally {
      await ingest.command('DROP TABLE IF EXISTS test_ucache').catch(() => undefined);
      await Promise.all([api.close(), ingest.close()]);
    }
  });
});
