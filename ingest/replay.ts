// Replays a JSONL recording of order-book snapshots into md.orderbook.
//   npm run ingest:replay -- <file> [--exchange coinbase --pair BTC/USD] [--speed 0] [--plain]
// --speed 0 (default) sends as fast as the broker takes it; 1 keeps the recording's pace.
// Values go Confluent-framed, with the registry id of md.orderbook's schema; --plain sends
// plain JSON, as a feed that does not use the registry would. A line that is not JSON or
// breaks the schema goes as it is (plain), and the processor dead-letters it with its reason.
import fs from 'node:fs';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.ts';
import { createProducer, createKafka, topicName } from '../lib/kafka.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import type { Kafka } from 'kafkajs';
import { openSchemaRegistry, type Registry } from '../lib/schema-registry.ts';
import { registeredSchemaId } from '../schemas/registration.ts';
import { lineToMessage, type LineOptions } from './orderbook-lines.ts';

export interface ReplayOptions extends LineOptions {
  file: string;
  topic: string;
  /** Frames each value with the registry id of md.orderbook's schema (subject `<topic>-value`); without it, plain JSON. */
  registry?: Registry;
  speed?: number;
  onProgress?: (sent: number) => void;
}

export async function replayFile(kafka: Kafka, opts: ReplayOptions): Promise<number> {
  const schemaId = opts.registry ? await registeredSchemaId(opts.registry, 'md.orderbook', `${opts.topic}-value`) : undefined;
  const producer = createProducer(kafka);
  await producer.connect();
  const frame = async (value: string): Promise<string | Buffer> => {
    if (!opts.registry || schemaId === undefined) return value;
    try {
      return await opts.registry.client.encode(schemaId, JSON.parse(value));
    } catch {
      return value;
    }
  };
  let sent = 0;
  let batch: { key: string | null; value: string | Buffer }[] = [];
  let firstTs: number | undefined;
  const started = Date.now();
  const flush = async () => {
    if (batch.length === 0) return;
    await producer.send({ topic: opts.topic, messages: batch });
    sent += batch.length;
    batch = [];
    opts.onProgress?.(sent);
  };
  try {
    const lines = readline.createInterface({ input: fs.createReadStream(opts.file), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.trim() === '') continue;
      const msg = lineToMessage(line, opts);
      if (opts.speed && opts.speed > 0) {
        const ts = eventTime(msg.value);
        if (ts !== undefined) {
          firstTs ??= ts;
          const due = started + (ts - firstTs) / opts.speed;
          if (due > Date.now()) {
            await flush();
            await new Promise((r) => setTimeout(r, due - Date.now()));
          }
        }
      }
      batch.push({ key: msg.key, value: await frame(msg.value) });
      if (batch.length >= 500) await flush();
    }
    await flush();
  } finally {
    await producer.disconnect();
  }
  return sent;
}

function eventTime(value: string): number | undefined {
  try {
    const ts = (JSON.parse(value) as { ts?: unknown }).ts;
    if (typeof ts === 'number') return ts;
    if (typeof ts === 'string') return Date.parse(ts);
  } catch {
    // garbage lines have no time and are sent at once
  }
  return undefined;
}

async function main(argv: string[], log: Logger): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      exchange: { type: 'string' },
      pair: { type: 'string' },
      speed: { type: 'string', default: '0' },
      file: { type: 'string' },
      plain: { type: 'boolean', default: false },
    },
  });
  const file = values.file ?? positionals[0];
  if (!file) throw new Error('usage: npm run ingest:replay -- <file.jsonl> [--exchange X --pair BASE/QUOTE] [--speed N] [--plain]');
  const speed = Number(values.speed);
  if (!Number.isFinite(speed) || speed < 0) throw new Error('--speed must be a number >= 0');
  const config = loadConfig();
  const kafka = createKafka(config, 'mm-replay', log);
  const topic = topicName(config, 'md.orderbook');
  const registry = values.plain ? undefined : await openSchemaRegistry(config, 'mm-replay');
  log.info('replaying', { file, topic, exchange: values.exchange, pair: values.pair, values: registry ? 'framed' : 'plain JSON' });
  let last = 0;
  const sent = await replayFile(kafka, {
    file,
    topic,
    speed,
    registry,
    exchange: values.exchange,
    pair: values.pair,
    onProgress: (n) => {
      if (n - last >= 5000) {
        last = n;
        log.info('progress', { sent: n });
      }
    },
  });
  log.info('done', { sent, topic });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const log = createLogger('info', 'replay');
  main(process.argv.slice(2), log).catch((e: unknown) => {
    log.error((e as Error).message);
    process.exit(1);
  });
}
