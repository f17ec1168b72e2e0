// The decoding step (processors/shell/decode-value.ts) with a real registry client: plain
// and framed JSON, and each way a framed value can be bad.
import { expect } from 'chai';
import { openSchemaRegistry } from '../../lib/schema-registry.ts';
import { ValueDecoder } from '../../processors/shell/decode-value.ts';
import type { Outcome } from '../../processors/shell/outcome.ts';
import { framed } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const trade = { exchange: 'x', pair: 'A/B', ts: 1, price: 1, amount: 2, side: 'buy' };

describe('decoding a message value', function () {
  this.timeout(30_000);
  let decoder: ValueDecoder;
  let id: number;

  before(async () => {
    const { config, service } = testStack();
    // A client of its own, that has seen no schema yet.
    decoder = new ValueDecoder((await openSchemaRegistry(config, 'mm-test-decoder')).client);
    id = service.schemaIds.get('md.trades')!;
  });

  it('reads plain JSON at once', () => {
    expect(decoder.decode(Buffer.from(JSON.stringify(trade)))).to.deep.equal({ kind: 'ok', value: { data: trade, schemaId: undefined } });
    expect(decoder.decode(Buffer.from('{"a":'))).to.have.property('reason').that.matches(/^not JSON: /);
    expect(decoder.decode(null)).to.deep.equal({ kind: 'dead-letter', reason: 'empty message' });
  });

  it('fetches the schema of a framed value once, then decodes at once', async () => {
    const first = decoder.decode(framed(id, trade));
    expect(first).to.be.instanceOf(Promise);
    expect(await first).to.deep.equal({ kind: 'ok', value: { data: trade, schemaId: id } });
    expect(decoder.decode(framed(id, { ...trade, price: 3 }))).to.deep.equal({ kind: 'ok', value: { data: { ...trade, price: 3 }, schemaId: id } });
  });

  it('dead-letters a framed value that breaks its schema or is not JSON, naming the id', () => {
    expect(decoder.decode(framed(id, { ...trade, side: 'hold', price: 0 }))).to.deep.equal({
      kind: 'dead-letter',
      reason: `schema (id ${id}): /price must be > 0; /side must be equal to one of the allowed values`,
    });
    expect((decoder.decode(framed(id, '{"price":')) as Outcome<unknown> & { reason: string }).reason).to.match(new RegExp(`^not JSON \\(framed, schema id ${id}\\): `));
    expect(decoder.decode(Buffer.from([0, 0, 1]))).to.deep.equal({ kind: 'dead-letter', reason: 'framed: 3 bytes, shorter than the 5-byte header' });
  });

  it("only parses a value framed with the reader's own schema id, which the processor checks as it checks plain JSON", () => {
    const own = new ValueDecoder({ cache: { getSchema: () => undefined }, getSchema: () => Promise.reject(new Error('not asked')) } as never, Date.now, id);
    const bad = { ...trade, side: 'hold' };
    expect(own.decode(framed(id, bad))).to.deep.equal({ kind: 'ok', value: { data: bad, schemaId: id } });
    expect((own.decode(framed(id, '{"price":')) as Outcome<unknown> & { reason: string }).reason).to.match(new RegExp(`^not JSON \\(framed, schema id ${id}\\): `));
  });

  it('dead-letters an unknown schema id, asking the registry once', async () => {
    const reason = 'unknown schema id 987654320: the schema registry has no schema with that id';
    expect(await decoder.decode(framed(987_654_320, trade))).to.deep.equal({ kind: 'dead-letter', reason });
    expect(decoder.decode(framed(987_654_320, trade))).to.deep.equal({ kind: 'dead-letter', reason });
  });
});
