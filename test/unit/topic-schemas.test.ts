// The registered form of the topics' schemas (schemas/topic-schemas.ts): self-contained
// draft-07 documents that accept and refuse exactly what the local 2020-12 validators do.
import { Ajv } from 'ajv';
import { expect } from 'chai';
import { bundledSchema, DRAFT_07, SCHEMA_TOPICS } from '../../schemas/topic-schemas.ts';
import { validateDerivatives, validateOrderBook, validateTrade, type ValidateFunction } from '../../schemas/index.ts';

const draft07 = (topic: (typeof SCHEMA_TOPICS)[number]) => new Ajv({ allErrors: true, allowUnionTypes: true, strict: true, strictRequired: false }).compile(JSON.parse(bundledSchema(topic)) as object);

describe('topic schemas as registered', () => {
  it('are draft-07 documents with every reference inside them', () => {
    for (const topic of SCHEMA_TOPICS) {
      const text = bundledSchema(topic);
      const schema = JSON.parse(text) as { $schema: string; definitions: Record<string, unknown> };
      expect(schema.$schema, topic).to.equal(DRAFT_07);
      const refs = [...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
      expect(refs.length, topic).to.be.greaterThan(0);
      for (const ref of refs) expect(Object.keys(schema.definitions), `${topic} ${ref}`).to.include(ref.replace('#/definitions/', ''));
      expect(text, topic).to.not.match(/\$defs|prefixItems|_defs\.schema\.json/);
      expect(bundledSchema(topic), 'the same text each time').to.equal(text);
      draft07(topic);
    }
  });

  it('accept and refuse what the local validators do', () => {
    const ts = Date.UTC(2026, 5, 25, 10);
    const cases: [(typeof SCHEMA_TOPICS)[number], ValidateFunction, unknown][] = [
      ['md.orderbook', validateOrderBook, { exchange: 'x', pair: 'A/B', ts, bids: [[1, 2]], asks: [[2, 0]] }],
      ['md.orderbook', validateOrderBook, { exchange: 'x', pair: 'A/B', ts, bids: [[1, -2]], asks: [] }],
      ['md.orderbook', validateOrderBook, { exchange: 'x', pair: 'A/B', ts, bids: [[0, 2]], asks: [] }],
      ['md.orderbook', validateOrderBook, { exchange: 'x', pair: 'A/B', ts, bids: [[1, 2, 3]], asks: [] }],
      ['md.orderbook', validateOrderBook, { exchange: 'x', pair: 'A/B', ts: 'x', bids: [], asks: [] }],
      ['md.orderbook', validateOrderBook, { exchange: '', pair: 'A/B', ts, bids: [], asks: [] }],
      ['md.trades', validateTrade, { exchange: 'x', pair: 'A/B', ts: '2026-06-25T10:00:00Z', price: 1, amount: 1, side: 'buy', id: 7 }],
      ['md.trades', validateTrade, { exchange: 'x', pair: 'A/B', ts, price: 0, amount: 1, side: 'buy' }],
      ['md.trades', validateTrade, { exchange: 'x', pair: 'A/B', ts, price: 1, amount: 1, side: 'hold' }],
      ['md.trades', validateTrade, { exchange: 'x', pair: 'A/B', ts, price: 1, amount: 1, side: 'sell', id: 1.5 }],
      ['md.derivatives', validateDerivatives, { exchange: 'x', pair: 'A_PERP/B', ts, funding_rate_8h: 0.0001 }],
      ['md.derivatives', validateDerivatives, { exchange: 'x', pair: 'A_PERP/B', ts }],
      ['md.derivatives', validateDerivatives, { exchange: 'x', pair: 'A_PERP/B', ts, usd_open_interest: -1 }],
    ];
    for (const [topic, local, message] of cases) {
      expect(draft07(topic)(message), `${topic} ${JSON.stringify(message)}`).to.equal(local(message));
    }
  });
});
