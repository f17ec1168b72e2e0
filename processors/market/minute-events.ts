// After a processor's minutes are written, one message per minute to market.minutes: what
// the event stream (api/stream/) tells its subscribers. Published after the write and its
// rollups, before the progress is recorded, so a failed publish retries the whole write
// (its insert is deduplicated by its token) and a minute's message is never lost; it may
// be published twice, which the stream drops (api/stream/hub.ts).
import type { Message, Producer } from 'kafkajs';
import { sendInParts } from '../../lib/kafka.ts';
import type { MinuteEventMessage } from '../../schemas/index.ts';
import type { ClosedMinute } from '../shell/minute-windows.ts';

/** The values of a written minute the stream shows, by family. */
export type MinuteValues<Row> = (row: Row) => Omit<MinuteEventMessage, 'exchange' | 'pair' | 'minute' | 'written_at'>;

export class MinuteEvents {
  constructor(
    private readonly producer: Producer,
    private readonly topic: string,
    /** The 5-byte frame header of the topic's registered schema. */
    private readonly header: Buffer,
    private readonly now: () => number,
  ) {}

  /** The moment a write was acknowledged, as the minutes' `written_at` gives it. */
  stamp(): number {
    return this.now();
  }

  async publish<Row>(minutes: readonly ClosedMinute<Row>[], values: MinuteValues<Row>, at: number): Promise<void> {
    const messages: Message[] = [];
    for (const m of minutes) {
      // A market maker's series (its wallet) is not market data.
      if (m.series !== '') continue;
      const event: MinuteEventMessage = { ...values(m.row), exchange: m.exchange, pair: m.pair, minute: m.minute, written_at: at };
      messages.push({ key: `${m.exchange}:${m.pair}`, value: Buffer.concat([this.header, Buffer.from(JSON.stringify(event))]) });
    }
    if (messages.length > 0) await sendInParts(this.producer, this.topic, messages);
  }
}
