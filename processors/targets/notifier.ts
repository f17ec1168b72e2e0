// The Telegram notifier (docs/targets.md): consumes targets.events and, for a target with
// `telegram_notifications`, sends a message naming the asset, exchange, pair, metric, value,
// threshold and new status to its organization's Telegram chat (fixture
// `telegram_chat_id`) through the Bot API's sendMessage. A failed send is retried with
// backoff; the events of a flush are committed only once sent. An event is sent once: its
// event_id is recorded right after Telegram accepted it, and an id already recorded (a
// repeat on the topic, a re-read after a restart) is not sent again. Only a crash between
// Telegram's answer and that record could send one twice; nothing can be done about it
// without an idempotency key, which the Bot API does not offer.
import type { Kafka, KafkaMessage } from 'kafkajs';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Config } from '../../lib/config.ts';
import { dlqTopicName, topicName } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import { ReferenceRepository } from '../../domain/reference/repository.ts';
import { describeErrors, validateTargetEvent, type TargetEventMessage } from '../../schemas/index.ts';
import { BatchConsumer } from '../shell/batch-consumer.ts';
import { markSent, NotificationQueue, sentAlready, TelegramBot, type TelegramOptions } from '../shell/telegram.ts';
import { frameOf } from '../../lib/schema-registry.ts';
import { parseJson } from '../shell/decode-value.ts';
import { deadLetter, ok, skip, type Outcome } from '../shell/outcome.ts';

export type { TelegramOptions } from '../shell/telegram.ts';

export const TELEGRAM_GROUP = 'notifier.telegram';
const CHANNEL = 'telegram';

const fmt = (v: number | null) => (v === null ? 'no data' : Number(v.toPrecision(6)).toLocaleString('en-US', { maximumFractionDigits: 6 }));

/** The message of a status change, in plain text. */
export function telegramText(e: TargetEventMessage): string {
  const head = e.status === 'alert' ? 'ALERT' : e.status === 'stable' ? 'OK' : e.status === 'recovering' ? 'Recovering' : e.status;
  const bound = e.direction === 'above' ? '>=' : '<=';
  return [
    `${head}: ${e.asset} ${e.pair} on ${e.exchange}`,
    `${e.metric} = ${fmt(e.value)} (target ${bound} ${fmt(e.effective_threshold)})`,
    `Status: ${e.previous_status} -> ${e.status}${e.market_hours ? ` (${e.market_hours})` : ''}`,
    `Target #${e.target_id} of ${e.organization}, hour ending ${e.minute.replace('.000Z', 'Z')}`,
  ].join('\n');
}

class TelegramPipeline extends NotificationQueue<TargetEventMessage> {
  private readonly bot: TelegramBot;

  constructor(
    private readonly ch: ClickHouse,
    opts: TelegramOptions,
    private readonly log: Logger,
  ) {
    super();
    this.bot = new TelegramBot(opts, log);
  }

  process(message: KafkaMessage, partition: number): Outcome<void> {
    const frame = frameOf(message.value);
    const parsed = frame ? parseJson(frame.payload) : message.value ? parseJson(message.value) : deadLetter('empty message');
    if (parsed.kind !== 'ok') return parsed;
    if (!validateTargetEvent(parsed.value)) return deadLetter(`schema: ${describeErrors(validateTargetEvent.errors)}`);
    const e = parsed.value;
    if (!e.telegram_notifications) return skip('telegram notifications off');
    this.enqueue(e, partition, message);
    return ok(undefined);
  }

  async flush(): Promise<void> {
    if (this.queue.length === 0) return;
    const sent = await sentAlready(this.ch, CHANNEL, [...new Set(this.queue.map((q) => q.event.event_id))]);
    const chats = await new ReferenceRepository(this.ch).telegramChats();
    while (this.queue.length > 0) {
      const { event } = this.queue[0]!;
      const chat = chats.get(event.organization);
      if (!sent.has(event.event_id) && chat) {
        await this.bot.send(chat, telegramText(event));
        await markSent(this.ch, CHANNEL, event.event_id, Date.now());
        sent.add(event.event_id);
      } else if (!chat) this.log.warn('no Telegram chat for the organization: notification not sent', { organization: event.organization, event_id: event.event_id });
      this.queue.shift();
    }
  }
}

export function telegramNotifier(kafka: Kafka, ch: ClickHouse, config: Pick<Config, 'topicPrefix' | 'flushIntervalMs'>, opts: TelegramOptions, log: Logger): BatchConsumer {
  const topic = topicName(config, 'targets.events');
  const groupId = config.topicPrefix + TELEGRAM_GROUP;
  return new BatchConsumer(kafka, new TelegramPipeline(ch, opts, log), { topic, dlqTopic: dlqTopicName(config, 'targets.events'), groupId, flushIntervalMs: config.flushIntervalMs }, log.child('telegram'));
}
