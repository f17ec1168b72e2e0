// End-to-end check of the real Kafka broker the project runs (ops/kafka.ts) with the
// kafkajs client the processors use: topic admin, keyed produce, a consumer group with
// manual commits, and no redelivery after the group restarts.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, Partitioners, type Admin, type Consumer, type EachBatchPayload } from 'kafkajs';
import { ensureTopics, topicConfigs } from '../lib/kafka.ts';
import { kafkaAnswers, startKafka, type KafkaProcess } from '../ops/kafka.ts';
import { waitFor as waitUntil } from './support/helpers.ts';

/** A port nothing listens on right now (the OS picks it). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Received {
  partition: number;
  offset: string;
  key: string;
  value: string;
}

/**
 * Start a consumer in `groupId` that reads with eachBatch and commits each batch itself
 * (autoCommit off), pushing what it sees into `sink`. Rejects `crashed` if the consumer dies.
 */
async function startGroupConsumer(
  kafka: Kafka,
  groupId: string,
  topic: string,
  sink: Received[],
): Promise<{ consumer: Consumer; joined: Promise<void>; fetches: () => number; crashed: Promise<never> }> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000, maxWaitTimeInMs: 250 });
  let fetchCount = 0;
  const joined = new Promise<void>((resolve) => {
    consumer.on(consumer.events.GROUP_JOIN, () => resolve());
  });
  consumer.on(consumer.events.FETCH, () => {
    fetchCount += 1;
  });
  const crashed = new Promise<never>((_, reject) => {
    consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
  });
  crashed.catch(() => undefined); // observed by the test when it races on it
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload) => {
      for (const m of batch.messages) {
        if (!isRunning() || isStale()) break;
        sink.push({
          partition: batch.partition,
          offset: m.offset,
          key: m.key?.toString() ?? '',
          value: m.value?.toString() ?? '',
        });
        resolveOffset(m.offset);
      }
      if (batch.messages.length === 0) return;
      // The committed offset is the next one to read.
      const next = (BigInt(batch.messages[batch.messages.length - 1]!.offset) + 1n).toString();
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
      await heartbeat();
    },
  });
  return { consumer, joined, fetches: () => fetchCount, crashed };
}

describe('Kafka broker (ops/kafka.ts) with kafkajs', function () {
  this.timeout(180_000);

  let broker: KafkaProcess | undefined;
  let dataDir: string | undefined;
  let brokers = process.env.KAFKA_BROKERS ?? '127.0.0.1:9092';
  let kafka: Kafka;
  let admin: Admin;

  before(async function () {
    this.timeout(180_000);
    if (!(await kafkaAnswers(brokers))) {
      dataDir = mkdtempSync(join(tmpdir(), 'mm-kafka-test-'));
      const port = await freePort();
      let controllerPort = await freePort();
      while (controllerPort === port) controllerPort = await freePort();
      broker = await startKafka({
        dataDir,
        port,
        controllerPort,
        log: (line) => console.log(`      ${line}`),
      });
      brokers = broker.brokers;
    }
    kafka = new Kafka({ clientId: 'kafka-broker-test', brokers: brokers.split(','), logLevel: logLevel.WARN });
    admin = kafka.admin();
    await admin.connect();
  });

  after(async function () {
    this.timeout(60_000);
    await admin?.disconnect().catch(() => undefined);
    await broker?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates a topic, produces keyed messages, consumes them once in a group with manual commits, deletes the topic', async function () {
    const suffix = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const topic = `kafka-broker-test-${suffix}`;
    const groupId = `kafka-broker-test-group-${suffix}`;
    const consumers: Consumer[] = [];

    expect(await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true })).to.equal(true);
    try {
      const meta = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(meta.topics[0]?.partitions).to.have.length(3);

      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      const sent = Array.from({ length: 50 }, (_, i) => ({ key: `instrument-${i % 7}`, value: `tick-${i}` }));
      try {
        await producer.send({ topic, messages: sent });
      } finally {
        await producer.disconnect();
      }

      const offsets = await admin.fetchTopicOffsets(topic);
      expect(offsets.reduce((n, p) => n + Number(p.high), 0)).to.equal(50);

      // First run of the group: everything arrives, each batch committed by hand.
      const first: Received[] = [];
      const c1 = await startGroupConsumer(kafka, groupId, topic, first);
      consumers.push(c1.consumer);
      await Promise.race([waitFor(() => first.length >= 50, 60_000, '50 messages'), c1.crashed]);
      await c1.consumer.disconnect();
      expect(first).to.have.length(50);
      expect(first.map((m) => m.value).sort()).to.deep.equal(sent.map((m) => m.value).sort());
      // Same key, same partition: the default partitioner keeps an instrument's ticks in order.
      const partitionOfKey = new Map<string, number>();
      for (const m of first) {
        expect(partitionOfKey.get(m.key) ?? m.partition, `partition of ${m.key}`).to.equal(m.partition);
        partitionOfKey.set(m.key, m.partition);
      }
      const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
      expect(committed[0]?.partitions.reduce((n, p) => n + Number(p.offset), 0)).to.equal(50);

      // Second run of the same group: the commits hold, so nothing old comes back. A fresh
      // message proves this consumer is really reading, not just idle.
      const second: Received[] = [];
      const c2 = await startGroupConsumer(kafka, groupId, topic, second);
      consumers.push(c2.consumer);
      await Promise.race([c2.joined, c2.crashed]);
      const fetchesAtJoin = c2.fetches();
      await Promise.race([waitFor(() => c2.fetches() >= fetchesAtJoin + 3, 30_000, 'fetches after rejoin'), c2.crashed]);
      expect(second, 'redelivered after restart').to.have.length(0);

      const p2 = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await p2.connect();
      try {
        await p2.send({ topic, messages: [{ key: 'instrument-0', value: 'tick-after-restart' }] });
      } finally {
        await p2.disconnect();
      }
      await Promise.race([waitFor(() => second.length >= 1, 30_000, 'the new message'), c2.crashed]);
      await c2.consumer.disconnect();
      expect(second.map((m) => m.value)).to.deep.equal(['tick-after-restart']);
    } finally {
      await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
      await admin.deleteTopics({ topics: [topic] });
    }
    // The controller acknowledges a deletion before every broker's metadata drops the topic.
    await waitUntil('the deleted topic gone from the metadata', async () => !(await admin.listTopics()).includes(topic));
  });

  it("creates the topic catalogue for three services starting at once (ensureTopics), each partition with a leader, and creates nothing the second time", async function () {
    const prefixes = [0, 1, 2].map((i) => `kafka-broker-test-${Date.now().toString(36)}${i}.`);
    try {
      const created = await Promise.all(prefixes.map((topicPrefix) => ensureTopics(admin, { topicPrefix })));
      for (const [i, topicPrefix] of prefixes.entries()) {
        const catalogue = topicConfigs({ topicPrefix }).map((t) => t.topic);
        expect(created[i]).to.have.members(catalogue);
        const { topics } = await admin.fetchTopicMetadata({ topics: catalogue });
        for (const t of topics) expect(t.partitions.every((p) => p.leader >= 0), t.name).to.equal(true);
      }
      expect(await ensureTopics(admin, { topicPrefix: prefixes[0]! })).to.deep.equal([]);
    } finally {
      const mine = (await admin.listTopics()).filter((t) => prefixes.some((p) => t.startsWith(p)));
      await admin.deleteTopics({ topics: mine });
    }
  });
});
