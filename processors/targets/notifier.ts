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
import { BatchConsumer, type Pipeline } from '../shell/batch-consumer.ts';
import { parseJson, frameOf } from '../shell/decode-value.ts';
import { deadLetter, ok, skip, type Outcome } from '../shell/outcome.ts';

export const TELEGRAM_GROUP = 'notifier.telegram';
const CHANNEL = 'telegram';

export interface TelegramOptions {
  token: string;
  apiUrl: string;
  /** Attempts per message, and the first pause between them (doubling). */
  attempts?: number;
  backoffMs?: number;
}

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

class TelegramPipeline implements Pipeline {
  private queue: { event: TargetEventMessage; partition: number; offset: bigint }[] = [];
  private chats = new Map<string, string>();

  constructor(
    private readonly ch: ClickHouse,
    private readonly opts: TelegramOptions,
    private readonly log: Logger,
  ) {}

  process(message: KafkaMessage, partition: number): Outcome<void> {
    const frame = frameOf(message.value);
    const parsed = frame ? parseJson(frame.payload) : message.value ? parseJson(message.value) : deadLetter('empty message');
    if (parsed.kind !== 'ok') return parsed;
    if (!validateTargetEvent(parsed.value)) return deadLetter(`schema: ${describeErrors(validateTargetEvent.errors)}`);
    const e = parsed.value;
    if (!e.telegram_notifications) return skip('telegram notifications off');
    this.queue.push({ event: e, partition, offset: BigInt(message.offset) });
    return ok(undefined);
  }

  async flush(): Promise<void> {
    if (this.queue.length === 0) return;
    const ids = [...new Set(this.queue.map((q) => q.event.event_id))];
    const sent = new Set(
      (
        await this.ch.query<{ event_id: string }>('SELECT event_id FROM notifications_sent FINAL WHERE channel = {c:String} AND event_id IN {ids:Array(String)}', { c: CHANNEL, ids })
      ).map((r) => r.event_id),
    );
    this.chats = await new ReferenceRepository(this.ch).telegramChats();
    while (this.queue.length > 0) {
      const { event } = this.queue[0]!;
      const chat = this.chats.get(event.organization);
      if (!sent.has(event.event_id) && chat) {
        await this.send(chat, telegramText(event));
        await this.ch.insert('notifications_sent', [{ channel: CHANNEL, event_id: event.event_id, sent_at: Date.now() }]);
        sent.add(event.event_id);
      } else if (!chat) this.log.warn('no Telegram chat for the organization: notification not sent', { organization: event.organization, event_id: event.event_id });
      this.queue.shift();
    }
  }

  private async send(chat: string, text: string): Promise<void> {
    const attempts = this.opts.attempts ?? 6;
    let pause = this.opts.backoffMs ?? 500;
    for (let i = 1; ; i++) {
      try {
        const r = await fetch(`${this.opts.apiUrl}/bot${this.opts.token}/sendMessage`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ chat_id: chat, text, disable_web_page_preview: true }),
          signal: AbortSignal.timeout(10_000),
        });
        if (r.ok) return;
        // 4xx other than 429 will not get better by retrying (a wrong chat, a revoked token).
        if (r.status >= 400 && r.status < 500 && r.status !== 429) {
          this.log.error('Telegram refused a notification', { status: r.status });
          return;
        }
        throw new Error(`Telegram answered ${r.status}`);
      } catch (e) {
        if (i >= attempts) throw e;
        this.log.warn('Telegram send failed, retrying', { attempt: i, err: e as Error });
        await new Promise((res) => setTimeout(res, pause));
        pause *= 2;
      }
    }
  }

  /** Not past the first event of the partition not sent yet. */
  commitPoint(partition: number, next: bigint): bigint {
    let point = next;
    for (const q of this.queue) if (q.partition === partition && q.offset < point) point = q.offset;
    return point;
  }

  async load(): Promise<void> {}

  forget(partition: number): void {
    this.queue = this.queue.filter((q) => q.partition !== partition);
  }

  backlog(): number {
    return this.queue.length;
  }
}

export function telegramNotifier(kafka: Kafka, ch: ClickHouse, config: Pick<Config, 'topicPrefix' | 'flushIntervalMs'>, opts: TelegramOptions, log: Logger): BatchConsumer {
  const topic = topicName(config, 'targets.events');
  const groupId = config.topicPrefix + TELEGRAM_GROUP;
  return new BatchConsumer(kafka, new TelegramPipeline(ch, opts, log), { topic, dlqTopic: dlqTopicName(config, 'targets.events'), groupId, flushIntervalMs: config.flushIntervalMs }, log.child('telegram'));
}
