// A replayed pair's open minutes close after a silence, counted in time its partition was
// read: a consumer held by a slow write does not take its own stall for the pair's end and
// close a minute whose next message waits unread.
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchConsumer, type Pipeline } from '../../processors/shell/batch-consumer.ts';
import { MinuteWindows } from '../../processors/shell/minute-windows.ts';
import { Count } from '../support/count.ts';
import { ok } from '../../processors/shell/outcome.ts';
import { ownTopic, uniq, waitFor } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const M = 60_000;

describe('a replayed pair going quiet', function () {
  this.timeout(60_000);

  it('keeps its minute open while the consumer is held by a write longer than the silence', async () => {
    const { kafka, log } = testStack();
    const own = await ownTopic('quiet-pairs-');
    const { topic, dlqTopic } = own;
    const producer = kafka.producer();
    await producer.connect();
    const send = (ts: number, x: number) => producer.send({ topic, messages: [{ key: 'OLD/B', value: JSON.stringify({ ts, x }) }] });

    const SILENCE_MS = 1_500;
    const windows = new MinuteWindows<number, { n: number; sum: number }, Count>({ latenessMs: 2 * M, historicalIdleMs: SILENCE_MS, create: () => new Count() });
    windows.load([], new Map());
    const written: { n: number; sum: number }[] = [];
    let holdNext = false;
    let held = false;
    const pipeline: Pipeline = {
      process(message, partition) {
        const { ts, x } = JSON.parse(message.value!.toString()) as { ts: number; x: number };
        const r = windows.accept('x', 'OLD/B', ts, x, partition, message.offset);
        return r.kind === 'ok' ? ok(undefined) : r;
      },
      // The first batch ends in a flush it waits for (as a backlog of written minutes makes
      // it), and that write takes far longer than the silence.
      backlog: () => (holdNext ? 5_000 : windows.backlog()),
      async flush(processed) {
        if (holdNext) {
          holdNext = false;
          held = true;
          await sleep(3 * SILENCE_MS);
        }
        const closed = windows.takeClosed();
        written.push(...closed.map((c) => c.row));
        windows.persisted(closed, processed);
      },
      commitPoint: (partition, next) => windows.commitPoint(partition, next),
      load: async () => undefined,
      forget: (partition) => windows.forget(partition),
      tick: (read) => windows.closeIdle(read),
    };
    const consumer = new BatchConsumer(kafka, pipeline, { topic, dlqTopic, groupId: uniq('quiet-pairs-group-'), flushIntervalMs: 100 }, log);
    // An hour old: a recording, whose minutes close on silence alone.
    const t0 = Date.now() - 3_600_000;
    const minute = t0 - (t0 % M);
    holdNext = true;
    await consumer.start();
    try {
      await send(minute, 1);
      await waitFor('the consumer held by its write', async () => held);
      // The same minute's next snapshot, sent while the consumer cannot read.
      await send(minute + 1_000, 2);
      await waitFor('the minute written', async () => written.length > 0);
      await sleep(SILENCE_MS);
    } finally {
      await consumer.stop();
      await producer.disconnect();
      await own.drop();
    }
    expect(consumer.stats.deadLettered).to.equal(0);
    expect(written).to.deep.equal([{ n: 2, sum: 3 }]);
  });
});
