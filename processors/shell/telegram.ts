// What the Telegram notifiers share (processors/targets/notifier.ts, processors/rfq/notifier.ts):
// the Bot API's sendMessage with retries and backoff, the record of what was sent
// (notifications_sent), and the queue of events waiting to be sent, whose offsets are not
// committed until they are.
import type { KafkaMessage } from 'kafkajs';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';
import type { Pipeline } from './batch-consumer.ts';
import type { Outcome } from './outcome.ts';

export interface TelegramOptions {
  token: string;
  apiUrl: string;
  /** Attempts per message, and the first pause between them (doubling). */
  attempts?: number;
  backoffMs?: number;
}

export class TelegramBot {
  constructor(
    private readonly opts: TelegramOptions,
    private readonly log: Logger,
  ) {}

  /** Sends `text` to `chat`; retries what may get better, gives up on what will not. */
  async send(chat: string, text: string): Promise<void> {
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
}

/** The ids of `ids` already sent on `channel`. */
export async function sentAlready(ch: ClickHouse, channel: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await ch.query<{ event_id: string }>('SELECT event_id FROM notifications_sent FINAL WHERE channel = {c:String} AND event_id IN {ids:Array(String)}', { c: channel, ids: [...ids] });
  return new Set(rows.map((r) => r.event_id));
}

export async function markSent(ch: ClickHouse, channel: string, id: string, at: number): Promise<void> {
  await ch.insert('notifications_sent', [{ channel, event_id: id, sent_at: at }]);
}

/** A pipeline of events waiting to be sent: a partition's offset is committed only up to its first event not sent yet. */
export abstract class NotificationQueue<E> implements Pipeline {
  protected queue: { event: E; partition: number; offset: bigint }[] = [];

  abstract process(message: KafkaMessage, partition: number): Outcome<void>;
  abstract flush(): Promise<void>;

  protected enqueue(event: E, partition: number, message: KafkaMessage): void {
    this.queue.push({ event, partition, offset: BigInt(message.offset) });
  }

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
