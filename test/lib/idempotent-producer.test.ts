// The project's producer (lib/kafka.ts createProducer) against the real broker, with its
// produce acknowledgements lost on the way back: the broker has written the batch, the
// connection breaks before kafkajs hears of it, and kafkajs sends the batch again.
import { expect } from 'chai';
import net from 'node:net';
import { Kafka, logLevel, Partitioners, type ISocketFactory, type Producer } from 'kafkajs';
import { createProducer } from '../../lib/kafka.ts';
import { uniq, waitFor } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const PRODUCE_API_KEY = 0;

/**
 * Connections to the broker that can lose the answer to the next produce requests: the
 * request reaches the broker, and the connection is reset before its answer reaches kafkajs.
 */
class LossyLink {
  /** Answers to produce requests still to lose. */
  private toLose = 0;
  /** Answers lost so far. */
  lost = 0;

  loseNextProduceAnswers(n: number): void {
    this.toLose = n;
  }

  readonly factory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = net.connect({ host, port }, onConnect);
    const doomed = new Set<number>();
    // Kafka frames: a 4-byte size, then a request (api key, version, correlation id) or an
    // answer (correlation id).
    let out = Buffer.alloc(0);
    const write = socket.write.bind(socket) as (chunk: Buffer, ...rest: unknown[]) => boolean;
    socket.write = ((chunk: Buffer, ...rest: unknown[]) => {
      out = Buffer.concat([out, chunk]);
      while (out.length >= 4 && out.length >= 4 + out.readInt32BE(0)) {
        const size = out.readInt32BE(0);
        if (out.readInt16BE(4) === PRODUCE_API_KEY && this.toLose > 0) {
          this.toLose -= 1;
          doomed.add(out.readInt32BE(8));
        }
        out = out.subarray(4 + size);
      }
      return write(chunk, ...rest);
    }) as typeof socket.write;
    let incoming = Buffer.alloc(0);
    const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
    socket.emit = ((event: string | symbol, ...args: unknown[]) => {
      if (event !== 'data') return emit(event, ...args);
      incoming = Buffer.concat([incoming, args[0] as Buffer]);
      while (incoming.length >= 8 && incoming.length >= 4 + incoming.readInt32BE(0)) {
        const frame = incoming.subarray(0, 4 + incoming.readInt32BE(0));
        incoming = incoming.subarray(frame.length);
        if (doomed.has(frame.readInt32BE(4))) {
          this.lost += 1;
          socket.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
          return true;
        }
        emit('data', frame);
      }
      return true;
    }) as typeof socket.emit;
    return socket;
  };
}

interface Setup {
  kafka: Kafka;
  link: LossyLink;
  topic: string;
}

async function setUp(retries: number): Promise<Setup> {
  const link = new LossyLink();
  const kafka = new Kafka({
    clientId: uniq('idempotent-test-'),
    brokers: testStack().config.kafkaBrokers,
    logLevel: logLevel.NOTHING,
    socketFactory: link.factory,
    retry: { initialRetryTime: 100, retries },
  });
  const topic = uniq(`${testStack().config.topicPrefix}idempotent.`);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  return { kafka, link, topic };
}

/** Every value in the topic, as many times as it is there. */
async function valuesIn(kafka: Kafka, topic: string): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  let total = 0;
  try {
    // Nothing transactional is written, so each offset holds one message.
    total = (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
  const consumer = kafka.consumer({ groupId: uniq('idempotent-test-'), maxWaitTimeInMs: 100 });
  const values: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value?.toString() ?? '') });
    await waitFor(`${total} messages of ${topic}`, async () => values.length >= total);
  } finally {
    await consumer.disconnect();
  }
  return values;
}

const batch = (name: string, n: number) => Array.from({ length: n }, (_, i) => ({ key: `pair-${i % 7}`, value: `${name}-${i}` }));

/** Ten sends of 20 messages; the answer to the fourth is lost. */
async function sendWithALostAnswer(producer: Producer, { link, topic }: Setup): Promise<string[]> {
  const sent: string[] = [];
  await producer.connect();
  try {
    for (let s = 0; s < 10; s++) {
      if (s === 3) link.loseNextProduceAnswers(1);
      const messages = batch(`send${s}`, 20);
      await producer.send({ topic, messages });
      sent.push(...messages.map((m) => m.value));
    }
  } finally {
    await producer.disconnect();
  }
  return sent;
}

describe('Producers (lib/kafka.ts createProducer): each message written once', function () {
  this.timeout(90_000);

  it('writes each message once when kafkajs sends a batch again after its acknowledgement was lost', async function () {
    const setup = await setUp(8);
    const sent = await sendWithALostAnswer(createProducer(setup.kafka), setup);
    expect(setup.link.lost, 'answers lost, each followed by a retry').to.equal(1);
    const stored = await valuesIn(setup.kafka, setup.topic);
    expect(stored).to.have.length(200);
    expect([...stored].sort()).to.deep.equal([...sent].sort());
  });

  it('the same lost acknowledgement makes a producer that is not idempotent write the batch twice', async function () {
    // Shows that the case above does provoke a retry of a batch the broker had written.
    const setup = await setUp(8);
    const sent = await sendWithALostAnswer(setup.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner }), setup);
    expect(setup.link.lost).to.equal(1);
    const stored = await valuesIn(setup.kafka, setup.topic);
    expect(stored).to.have.length(220);
    expect(new Set(stored).size).to.equal(sent.length);
  });

  it('after a send that gave up with its batch written, the next send is written too', async function () {
    // One retry: the batch is written, and neither answer arrives.
    const setup = await setUp(1);
    const producer = createProducer(setup.kafka);
    await producer.connect();
    try {
      setup.link.loseNextProduceAnswers(2);
      const first = batch('given-up', 20);
      let failure: unknown;
      await producer.send({ topic: setup.topic, messages: first }).catch((e: unknown) => (failure = e));
      expect(failure, 'the send gave up').to.be.instanceOf(Error);
      expect(setup.link.lost).to.equal(2);
      // The same keys, so each partition gets as many messages as from the batch given up:
      // a producer keeping its id would have the broker take them for that batch's copy.
      const next = batch('next', 20);
      await producer.send({ topic: setup.topic, messages: next });
      const stored = await valuesIn(setup.kafka, setup.topic);
      expect([...stored].sort()).to.deep.equal([...first, ...next].map((m) => m.value).sort());
    } finally {
      await producer.disconnect();
    }
  });
});
