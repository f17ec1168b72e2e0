// ClickHouse.jsonArray writes a SELECT's rows as one JSON array through a row template,
// jsonLines a row a line with its keys first: the rows' bytes must be what JSON.stringify
// makes of the same rows, whatever the values hold.
import { expect } from 'chai';
import type { Readable } from 'node:stream';
import { openClickHouse } from '../../lib/clickhouse.ts';
import { testStack } from '../support/stack.ts';

async function text(body: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

describe('ClickHouse.jsonArray and jsonLines', () => {
  // Strings that need escaping in JSON, or that a careless writer escapes needlessly.
  const strings = ['plain', 'quote " and backslash \\', 'slash BTC/USDT', 'tab\tnewline\n', 'ünïcödé ✓', '$ and ${x}', ''];
  const sql = `SELECT arrayJoin(arrayEnumerate({s:Array(String)})) AS i, {s:Array(String)}[i] AS \`label\`,
    i / 3 AS \`0.05bps\`, toFloat64(i * 100) AS \`25000_at_0.5bps\`, if(i = 2, 1e-300, i * 1e20) AS \`big\`
    ORDER BY i`;
  const columns = ['i', 'label', '0.05bps', '25000_at_0.5bps', 'big'];

  it('writes the bytes JSON.stringify writes for the same rows', async () => {
    const ch = testStack().service.deps.ch;
    const rows = await ch.query<Record<string, unknown>>(sql, { s: strings });
    expect(rows).to.have.length(strings.length);
    const written = await text(await ch.jsonArray(sql, columns, { s: strings }));
    expect(written).to.equal(`[\n${rows.map((r) => JSON.stringify(r)).join(',\n')}\n]\n`);
    expect((JSON.parse(written) as { label: string }[]).map((r) => r.label)).to.deep.equal(strings);
  });

  it('writes an empty array for no rows', async () => {
    const ch = testStack().service.deps.ch;
    const written = await text(await ch.jsonArray(`${sql} LIMIT 0`, columns, { s: strings }));
    expect(JSON.parse(written)).to.deep.equal([]);
  });

  it('refuses a column name it would have to escape in the template', async () => {
    const ch = testStack().service.deps.ch;
    let error: unknown;
    try {
      await ch.jsonArray('SELECT 1 AS `a"b`', ['a"b']);
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.match(/column name not allowed/);
  });

  it('jsonLines: each row a line, its keys raw before tabs, then the object jsonArray writes', async () => {
    const ch = testStack().service.deps.ch;
    const rows = await ch.query<Record<string, unknown>>(sql, { s: strings });
    const keyed = `SELECT i * 1000 AS k1, 7 AS k2, * FROM (${sql})`;
    const written = (await ch.jsonLines(keyed, ['k1', 'k2'], columns, { s: strings })).toString('utf8');
    // Tabs and newlines inside values are escaped, so a line is a row and a tab ends a key.
    expect(written).to.equal(`${rows.map((r) => `${Number(r.i) * 1000}\t7\t${JSON.stringify(r)}`).join('\n')}\n`);
    expect((await ch.jsonLines(`${keyed} LIMIT 0`, ['k1', 'k2'], columns, { s: strings })).toString()).to.equal('\n');
  });

  it('runs every statement of a connection at its priority', async () => {
    const ch = openClickHouse(testStack().config, 'test-priority', { priority: 2 });
    try {
      expect(await ch.query<{ p: number }>("SELECT getSetting('priority') AS p")).to.deep.equal([{ p: 2 }]);
    } finally {
      await ch.close();
    }
  });
});
