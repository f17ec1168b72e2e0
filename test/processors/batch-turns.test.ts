// How a batch consumer reads: a long batch (a feed's burst, a catch-up after downtime) is
// handled in turns of the event loop, so it does not hold the API's requests and the other
// consumers until its last message; and a pipeline that holds as many of a partition's
// messages as it may stops the reading of that partition until it holds fewer.
import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { BatchConsumer, TURN_MS, type Pipeline } from '../../processors/shell/batch-consumer.ts';
import { ownTopic, uniq, waitFor } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

/** A pipeline that does only `process` (and, when given, `full`). */
const pipelineOf = (process: Pipeline['process'], full?: Pipeline['full']): Pipeline => ({
  process,
  full,
  flush: async () => undefined,
  commitPoint: (_partition, next) => next,
  load: async () => undefined,
  forget: () => undefined,
});

/**
 * A topic of one partition of its own, and `count` messages `m0`, `m1`, ... on it before the
 * consumer starts (its first fetch is one batch of all of them); `run` while a consumer with
 * the pipeline reads it, `send(n)` sending the next n messages.
 */
async function consuming(count: number, pipeline: Pipeline, run: (consumer: BatchConsumer, send: (n: number) => Promise<void>) => Promise<void>): Promise<void> {
  const { kafka, log } = testStack();
  const own = await ownTopic('batch-consumer-');
  const { topic, dlqTopic } = own;
  const producer = kafka.producer();
  await producer.connect();
  let sent = 0;
  const send = async (n: number) => {
    await producer.send({ topic, messages: Array.from({ length: n }, (_, i) => ({ value: `m${sent + i}` })) });
    sent += n;
  };
  const consumer = new BatchConsumer(kafka, pipeline, { topic, dlqTopic, groupId: uniq('batch-consumer-group-') }, log);
  try {
    if (count > 0) await send(count);
    await consumer.start();
    await run(consumer, send);
  } finally {
    await consumer.stop();
    await producer.disconnect();
    await own.drop();
  }
}

describe('a batch consumer', function () {
  this.timeout(60_000);

  it('lets a timer set at a batch\'s first message run long before its last', async () => {
    const messages = 40;
    const order: string[] = [];
    const pipeline = pipelineOf((message) => {
      if (order.length === 0) setTimeout(() => order.push('timer'), 0);
      // Each message takes a quarter of a turn: the batch, ten turns' worth.
      const until = performance.now() + TURN_MS / 4;
      while (performance.now() < until);
      order.push(message.value!.toString());
      return { kind: 'ok', value: undefined };
    });
    await consuming(messages, pipeline, async () => {
      await waitFor('every message handled', async () => order.filter((x) => x !== 'timer').length === messages);
    });
    // Without turns the timer would run after the batch: at its end.
    expect(order.indexOf('timer')).to.be.within(1, messages / 2);
  });

  for (const handedOver of [false, true]) {
    it(`reads no further message of a partition while the pipeline is full for it, then goes on from there, each message once${handedOver ? ' (batches handed over to a helper)' : ''}`, async () => {
      // The pipeline keeps every message it is given (as messages waiting for their rate) and
      // is full at five; the test lets them go. Batches of five, each sent once the one before is handled.
      const handled: string[] = [];
      let held = 0;
      const pipeline = pipelineOf(
        (message) => {
          handled.push(message.value!.toString());
          held++;
          return { kind: 'ok', value: undefined };
        },
        () => held >= 5,
      );
      if (handedOver) pipeline.prepare = async () => undefined;
      await consuming(5, pipeline, async (consumer, send) => {
        await waitFor('the first batch handled', async () => handled.length === 5);
        for (let round = 1; round <= 2; round++) {
          await send(5);
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          expect(handled, 'nothing read while full').to.have.length(5 * round);
          expect(consumer.stats.readsHeldBack).to.equal(round);
          held = 0;
          await waitFor(`batch ${round + 1} handled`, async () => handled.length === 5 * (round + 1));
        }
      });
      expect(handled).to.deep.equal(Array.from({ length: 15 }, (_, i) => `m${i}`));
    });
  }
});
