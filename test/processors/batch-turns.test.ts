// A batch's messages are handled in turns of the event loop: a long batch (a feed's burst,
// a catch-up after downtime) does not hold the API's requests and the other consumers
// until its last message.
import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { BatchConsumer, TURN_MS, type Pipeline } from '../../processors/shell/batch-consumer.ts';
import { uniq, waitFor } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

describe('a batch consumer', function () {
  this.timeout(60_000);

  it('lets a timer set at a batch\'s first message run long before its last', async () => {
    const { kafka, log } = testStack();
    const topic = uniq('batch-turns-');
    const dlqTopic = `${topic}.dlq`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }, { topic: dlqTopic, numPartitions: 1 }], waitForLeaders: true });
    const messages = 40;
    const producer = kafka.producer();
    await producer.connect();
    // Sent before the consumer starts: its first fetch is one batch of all of them.
    await producer.send({ topic, messages: Array.from({ length: messages }, (_, i) => ({ value: `m${i}` })) });
    await producer.disconnect();

    const order: string[] = [];
    const pipeline: Pipeline = {
      process(message) {
        if (order.length === 0) setTimeout(() => order.push('timer'), 0);
        // Each message takes a quarter of a turn: the batch, ten turns' worth.
        const until = performance.now() + TURN_MS / 4;
        while (performance.now() < until);
        order.push(message.value!.toString());
        return { kind: 'ok', value: undefined };
      },
      flush: async () => undefined,
      commitPoint: (_partition, next) => next,
      load: async () => undefined,
      forget: () => undefined,
    };
    const consumer = new BatchConsumer(kafka, pipeline, { topic, dlqTopic, groupId: uniq('batch-turns-group-') }, log);
    await consumer.start();
    try {
      await waitFor('every message handled', async () => order.filter((x) => x !== 'timer').length === messages);
    } finally {
      await consumer.stop();
      await admin.deleteTopics({ topics: [topic, dlqTopic] }).catch(() => undefined);
      await admin.disconnect();
    }
    // Without turns the timer would run after the batch: at its end.
    expect(order.indexOf('timer')).to.be.within(1, messages / 2);
  });

  it('reads no further message of a partition while the pipeline is full for it, then goes on from there, each message once', async () => {
    const { kafka, log } = testStack();
    const topic = uniq('batch-full-');
    const dlqTopic = `${topic}.dlq`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }, { topic: dlqTopic, numPartitions: 1 }], waitForLeaders: true });
    const messages = 30;
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: Array.from({ length: messages }, (_, i) => ({ value: `m${i}` })) });
    await producer.disconnect();

    // The pipeline keeps every message it is given (as messages waiting for their rate) and
    // is full at five; the test lets them go.
    const handled: string[] = [];
    let held = 0;
    const pipeline: Pipeline = {
      process(message) {
        handled.push(message.value!.toString());
        held++;
        return { kind: 'ok', value: undefined };
      },
      full: () => held >= 5,
      flush: async () => undefined,
      commitPoint: (_partition, next) => next,
      load: async () => undefined,
      forget: () => undefined,
    };
    const consumer = new BatchConsumer(kafka, pipeline, { topic, dlqTopic, groupId: uniq('batch-full-group-') }, log);
    await consumer.start();
    try {
      await waitFor('the first five handled', async () => handled.length === 5);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(handled).to.have.length(5);
      expect(consumer.stats.readsHeldBack).to.equal(1);
      for (let round = 1; handled.length < messages; round++) {
        held = 0;
        await waitFor(`round ${round}`, async () => handled.length === Math.min(messages, 5 * (round + 1)));
      }
    } finally {
      await consumer.stop();
      await admin.deleteTopics({ topics: [topic, dlqTopic] }).catch(() => undefined);
      await admin.disconnect();
    }
    expect(handled).to.deep.equal(Array.from({ length: messages }, (_, i) => `m${i}`));
  });
});
