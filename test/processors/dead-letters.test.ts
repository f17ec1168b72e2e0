// A burst of bad messages larger together than the broker takes in one send goes to the
// dead-letter topic whole, and the processor goes on: a good message after it is written.
import { expect } from 'chai';
import { dlqTopicName, topicName } from '../../lib/kafka.ts';
import { dlqRecords, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

describe('dead letters in bulk', function () {
  this.timeout(90_000);
  const w = world();
  const spot = `${w.asset}/USDT`;
  const minute = Math.floor((Date.now() - 3_600_000) / 60_000) * 60_000;

  before(() => seed(w.fixture));

  it('sends 1,500 dead letters of 2 kB each (3 MB) and keeps processing', async () => {
    const { kafka, config, service } = testStack();
    const levels = Array.from({ length: 60 }, (_, i) => [100 - i * 0.01, 1.2345]);
    const bad = Array.from({ length: 1_500 }, (_, i) => ({ key: `bulk-${w.tag}-${i}`, value: JSON.stringify({ exchange: w.ex, pair: 'NOT/LISTED', ts: minute + i, bids: levels, asks: levels }) }));
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < bad.length; i += 250) await producer.send({ topic: topicName(config, 'md.orderbook'), messages: bad.slice(i, i + 250) });
    await producer.send({ topic: topicName(config, 'md.orderbook'), messages: [{ key: `${w.ex}:${spot}`, value: JSON.stringify({ exchange: w.ex, pair: spot, ts: minute + 5_000, bids: [[99, 1]], asks: [[101, 1]] }) }] });
    await producer.disconnect();
    const mine = (records: { key: string | null }[]) => records.filter((r) => r.key?.startsWith(`bulk-${w.tag}-`));
    const records = mine(await dlqRecords(dlqTopicName(config, 'md.orderbook'), (all) => mine(all).length >= bad.length));
    expect(records).to.have.length(bad.length);
    expect(records[0]!).to.include({ reason: 'unknown pair: ' + w.ex + ' NOT/LISTED' });
    await waitFor('the good minute', async () => {
      const rows = await service.deps.ch.query<{ n: number }>('SELECT count() AS n FROM book_minutes FINAL WHERE exchange = {ex:String}', { ex: w.ex });
      return Number(rows[0]!.n) === 1;
    }, 30_000);
  });
});
