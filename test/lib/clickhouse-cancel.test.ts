// A connection's cancel() stops the statements it runs on the real engine (embedded chdb
// here, or the server of CLICKHOUSE_URL): a long bound SELECT and a long INSERT ... SELECT
// end with ClickHouse's "query was cancelled" instead of running for minutes, and the
// connection refuses what is asked after.
import { expect } from 'chai';
import { ClickHouseQueryError, ClickHouseStoppedError, openClickHouse } from '../../lib/clickhouse.ts';
import { silentLogger } from '../../lib/log.ts';
import { waitFor } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

/** Minutes of work on two cores (checked against a bound value, so chdb queues other bound statements behind it). */
const LONG_SELECT = 'SELECT count() FROM numbers({n:UInt64}) WHERE sipHash64(number) % 7 = 0';

describe('ClickHouse cancel', () => {
  it('kills the statements a connection runs and refuses new ones', async () => {
    const { config } = testStack();
    const name = `cancel-${process.pid}-${Date.now().toString(36)}`;
    const ch = openClickHouse(config, name, { connections: 2, log: silentLogger });
    const probe = openClickHouse(config, 'cancel-probe', { log: silentLogger });
    const table = `cancel_${Date.now().toString(36)}`;
    try {
      await probe.command(`CREATE TABLE ${table} (x UInt64) ENGINE = MergeTree ORDER BY x`);
      const select = ch.query(LONG_SELECT, { n: 1e12 }).then(
        () => 'finished',
        (e: unknown) => e,
      );
      const insert = ch.command(`INSERT INTO ${table} SELECT number FROM numbers(1000000000000) WHERE sipHash64(number) % 7 = 0`).then(
        () => 'finished',
        (e: unknown) => e,
      );
      // Both are running in the engine before the cancel (read without bound values: those
      // would wait behind the running bound SELECT).
      await waitFor('both statements running', async () => {
        const rows = await probe.query<{ n: number }>(`SELECT count() AS n FROM system.processes WHERE ${config.clickhouseUrl ? 'query_id' : "Settings['log_comment']"} LIKE '${name}-%'`);
        return rows[0]!.n === 2;
      }, 20_000);

      await ch.cancel();
      for (const outcome of [await select, await insert]) {
        expect(outcome).to.be.instanceOf(ClickHouseQueryError);
        expect(String((outcome as ClickHouseQueryError).cause && ((outcome as ClickHouseQueryError).cause as { code?: unknown }).code)).to.equal('394');
      }
      const after = await ch.query('SELECT 1').catch((e: unknown) => e);
      expect(after).to.be.instanceOf(ClickHouseStoppedError);
      // The engine is free for everyone else.
      expect(await probe.query<{ one: number }>('SELECT {one:UInt8} AS one', { one: 1 })).to.deep.equal([{ one: 1 }]);
    } finally {
      await probe.command(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
      await Promise.all([ch.close(), probe.close()]);
    }
  });
});
