// The schema registry against the real one the test stack runs: the topics' schemas
// registered at start, a start refused for an incompatible schema, and md.orderbook
// taking framed and plain messages alike (and dead-lettering bad framed ones).
import { expect } from 'chai';
import { dlqTopicName, topicName } from '../../lib/kafka.ts';
import { describeIncompatibility } from '../../lib/schema-registry.ts';
import { IncompatibleSchemaError, registerTopicSchemas } from '../../schemas/registration.ts';
import { startService } from '../../ops/service.ts';
import { bundledSchema, SCHEMA_TOPICS } from '../../schemas/topic-schemas.ts';
import { call, dlqRecords, framed, login, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';


async function get<T>(url: string): Promise<T> {
  const r = await fetch(url);
  expect(r.status, url).to.equal(200);
  return (await r.json()) as T;
}

describe('schema registry', function () {
  this.timeout(60_000);
  /** The id of an older md.trades schema, registered under another prefix by the test below. */
  let oldTradesId: number;

  it('holds every topic schema from the start as <topic>-value, JSON Schema, BACKWARD, read over its Confluent API', async () => {
    const { config, service } = testStack();
    const api = service.registry.api;
    for (const topic of SCHEMA_TOPICS) {
      const subject = `${config.topicPrefix}${topic}-value`;
      // Asked by name: a registry that outlived many runs lists only its first 1,000 subjects.
      expect(await get<number[]>(`${api}/subjects/${subject}/versions`), subject).to.deep.equal([1]);
      const latest = await get<{ id: number; version: number; schema: string; schemaType?: string }>(`${api}/subjects/${subject}/versions/latest`);
      expect(latest.schemaType, subject).to.equal('JSON');
      expect(JSON.parse(latest.schema), subject).to.deep.equal(JSON.parse(bundledSchema(topic)));
      expect(latest.id, subject).to.equal(service.schemaIds.get(topic));
      expect(await get<{ compatibilityLevel: string }>(`${api}/config/${subject}`), subject).to.deep.equal({ compatibilityLevel: 'BACKWARD' });
    }
  });

  it('registers nothing new when the same schemas are registered again (a restart)', async () => {
    const { config, service, log } = testStack();
    const again = await registerTopicSchemas(service.registry, config, log);
    expect(Object.fromEntries(again)).to.deep.equal(Object.fromEntries(service.schemaIds));
    expect(await get<number[]>(`${service.registry.api}/subjects/${config.topicPrefix}md.trades-value/versions`)).to.deep.equal([1]);
  });

  it('stops a start whose schema the registry refuses as incompatible, naming the topic and the fields', async () => {
    const { config, service, log } = testStack();
    const topicPrefix = `${config.topicPrefix}old.`;
    // What an older md.trades said: a price might be a string, and the side could be missing.
    // Today's schema narrows both, so messages already in the topic could fail it.
    const old = JSON.parse(bundledSchema('md.trades')) as { properties: Record<string, unknown>; required: string[] };
    old.properties.price = { type: ['number', 'string'] };
    old.required = old.required.filter((f) => f !== 'side');
    oldTradesId = (await registerTopicSchemas(service.registry, { topicPrefix }, log, new Map([['md.trades', JSON.stringify(old)]]))).get('md.trades')!;

    const failure = await startService({ ...config, topicPrefix }, log, { processors: false }).then(
      (s) => s.stop().then(() => undefined),
      (e: unknown) => e,
    );
    expect(failure).to.be.instanceOf(IncompatibleSchemaError);
    const message = (failure as Error).message;
    expect(message).to.contain(`the schema of md.trades (subject ${topicPrefix}md.trades-value)`);
    expect(message).to.contain('field "price"');
    expect(message).to.contain('field "side" became required');
    // The registry kept the old version only.
    expect(await get<number[]>(`${service.registry.api}/subjects/${topicPrefix}md.trades-value/versions`)).to.deep.equal([1]);
  });

  it("keeps another registry's wording when it cannot name the fields", () => {
    expect(describeIncompatibility('Schema being registered is incompatible with an earlier schema', undefined, '{}')).to.deep.equal([]);
    expect(
      describeIncompatibility(
        'Incompatible artifact: s [JSON], num of incompatible diffs: {1}, list of diff types: [STRING_TYPE_MAX_LENGTH_DECREASED at /properties/exchange/[ref #/properties/exchange]/maxLength]',
        '{}',
        '{}',
      ),
    ).to.deep.equal(['field "exchange": string max length decreased (STRING_TYPE_MAX_LENGTH_DECREASED at /properties/exchange/[ref #/properties/exchange]/maxLength)']);
  });

  describe('md.orderbook with framed and plain values', () => {
    const w = world();
    const pair = `${w.asset}/USDT`;
    // An hour ago: the minute is written once the pair goes quiet, without waiting for the lateness.
    const minute = Math.floor((Date.now() - 3_600_000) / 60_000) * 60_000;
    const book = (ts: number, bid: number) => ({ exchange: w.ex, pair, ts, bids: [[bid, 1]], asks: [[bid + 2, 1]] });
    let token: string;

    before(async () => {
      await seed(w.fixture);
      token = await login(w.users.staff.email, w.password);
    });

    it('processes a framed message (an outside client, the registered id) and a plain one', async () => {
      const { kafka, config, service } = testStack();
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: topicName(config, 'md.orderbook'),
        messages: [
          { key: `${w.ex}:${pair}`, value: framed(service.schemaIds.get('md.orderbook')!, book(minute + 1_000, 100)) },
          { key: `${w.ex}:${pair}`, value: JSON.stringify(book(minute + 2_000, 102)) },
        ],
      });
      await producer.disconnect();
      const q = new URLSearchParams({ exchange: w.ex, pair, time_start: new Date(minute).toISOString(), time_end: new Date(minute + 60_000).toISOString() });
      const rows = await waitFor('the minute row', async () => {
        const r = await call<{ samples: number; mid: number }[]>('GET', `/v1/admin/orderbook/minutes/?${q}`, { token });
        return r.body.length > 0 && r.body;
      });
      expect(rows).to.have.length(1);
      expect(rows[0]).to.include({ samples: 2, mid: 102 });
    });

    it('dead-letters a framed message of an unknown schema id and one that breaks its schema, with the reasons', async () => {
      const { kafka, config, service } = testStack();
      const id = service.schemaIds.get('md.orderbook')!;
      const unknownId = 987_654_321;
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({
        topic: topicName(config, 'md.orderbook'),
        messages: [
          { key: `unknown-id-${w.tag}`, value: framed(unknownId, book(minute + 3_000, 100)) },
          { key: `bad-amount-${w.tag}`, value: framed(id, { ...book(minute + 4_000, 100), bids: [[100, -1]] }) },
        ],
      });
      await producer.disconnect();
      const mine = <R extends { key: string | null }>(records: R[]): R[] => records.filter((r) => r.key?.endsWith(`-${w.tag}`));
      const records = mine(await dlqRecords(dlqTopicName(config, 'md.orderbook'), (all) => mine(all).length >= 2));
      const unknown = records.find((r) => r.key === `unknown-id-${w.tag}`)!;
      expect(unknown.reason).to.equal(`unknown schema id ${unknownId}: the schema registry has no schema with that id`);
      expect(unknown.schema_id).to.equal(unknownId);
      expect(JSON.parse(unknown.value!)).to.deep.equal(book(minute + 3_000, 100));
      const bad = records.find((r) => r.key === `bad-amount-${w.tag}`)!;
      expect(bad.reason).to.equal('schema: /bids/0/1 must be >= 0');
      expect(bad.schema_id).to.equal(id);
    });

    it("still checks a framed value of another schema id against the processor's own schema", async () => {
      const { kafka, config } = testStack();
      const producer = kafka.producer();
      await producer.connect();
      // Valid for the older md.trades schema (price may be a string), not for today's.
      const trade = { exchange: w.ex, pair, ts: minute + 5_000, price: '100', amount: 1, side: 'buy' };
      await producer.send({ topic: topicName(config, 'md.trades'), messages: [{ key: `old-schema-${w.tag}`, value: framed(oldTradesId, trade) }] });
      await producer.disconnect();
      const records = await dlqRecords(dlqTopicName(config, 'md.trades'), (all) => all.some((r) => r.key === `old-schema-${w.tag}`));
      const old = records.find((r) => r.key === `old-schema-${w.tag}`)!;
      expect(old.reason).to.equal('schema: /price must be number');
      expect(old.schema_id).to.equal(oldTradesId);
    });
  });
});
