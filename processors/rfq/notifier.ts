// The RFQ Telegram notifier (addendum section 8; docs/rfq.md, "Telegram"): consumes
// rfq.events and tells the organizations concerned, in their Telegram chats (fixture
// `telegram_chat_id`), through the Bot API's sendMessage:
// * an RFQ past `draft` (opened, closed, cancelled, awarded): its project and the market
//   makers it invites (every market maker when it invites everyone);
// * a proposal's change: its market maker, and the project; while a sealed RFQ is before
//   its deadline the project is told only that a sealed proposal changed, not by whom.
// Each (event, organization) is sent once: recorded in notifications_sent right after
// Telegram accepted it, and not sent again when the event comes again (a repeat, a re-read
// after a restart). As the targets notifier, only a crash between Telegram's answer and
// that record could send one twice: the Bot API has no idempotency key.
import type { Kafka, KafkaMessage } from 'kafkajs';
import { AgreementStore } from '../../domain/agreements/store.ts';
import { ReferenceRepository } from '../../domain/reference/repository.ts';
import { proposalsUnsealed, rfqOf, type RfqBody } from '../../domain/rfq/rfq.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Config } from '../../lib/config.ts';
import { dlqTopicName, topicName } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import { describeErrors, validateRfqEvent, type AgreementEventMessage } from '../../schemas/index.ts';
import { BatchConsumer } from '../shell/batch-consumer.ts';
import { markSent, NotificationQueue, sentAlready, TelegramBot, type TelegramOptions } from '../shell/telegram.ts';
import { frameOf } from '../../lib/schema-registry.ts';
import { parseJson } from '../shell/decode-value.ts';
import { deadLetter, ok, skip, type Outcome } from '../shell/outcome.ts';

export const RFQ_TELEGRAM_GROUP = 'notifier.telegram.rfq';
export const RFQ_TELEGRAM_CHANNEL = 'telegram-rfq';

/** The notifications_sent id of one event to one organization. */
export const sentId = (eventId: string, organization: string) => `${eventId}>${organization}`;

export interface Notice {
  organization: string;
  text: string;
}

const iso = (v: unknown) => (typeof v === 'number' ? new Date(v).toISOString().replace('.000Z', 'Z') : String(v));

/**
 * Who is told what about an event. `rfq` is the RFQ as stored now (for a proposal's event:
 * whether it is sealed, its title); `makers` every market-maker organization.
 */
export function noticesOf(e: AgreementEventMessage, rfq: { title: string; invited: string[]; sealed: boolean; deadline: number } | undefined, makers: readonly string[], now: number): Notice[] {
  const r = e.record;
  if (e.type === 'rfq') {
    if (e.status === 'draft') return [];
    const title = String(r.title ?? '');
    const text = [
      `RFQ #${e.id} "${title}" for ${e.asset}: ${e.status}`,
      e.status === 'open' ? `Proposals until ${iso(r.deadline)}${r.sealed ? ' (sealed)' : ''}` : e.status === 'awarded' ? `Awarded to proposal #${String(r.awarded_proposal)}` : '',
      `Requested by ${e.organization}`,
    ]
      .filter((l) => l !== '')
      .join('\n');
    const invited = Array.isArray(r.invited) && r.invited.length > 0 ? (r.invited as string[]) : makers;
    return [e.organization, ...invited].map((organization) => ({ organization, text }));
  }
  const rfqLine = `RFQ #${String(e.rfq)}${rfq ? ` "${rfq.title}"` : ''} for ${e.asset}`;
  const own = { organization: e.market_maker, text: [`Your proposal #${e.id} (version ${e.version}): ${e.status}`, rfqLine].join('\n') };
  const hidden = rfq !== undefined && !proposalsUnsealed(rfq, now);
  const project = {
    organization: e.organization,
    text: hidden ? [`A sealed proposal changed: ${e.status}`, rfqLine, `Shown after the deadline, ${iso(rfq.deadline)}`].join('\n') : [`Proposal #${e.id} from ${e.market_maker} (version ${e.version}): ${e.status}`, rfqLine].join('\n'),
  };
  return [project, own];
}

class RfqTelegramPipeline extends NotificationQueue<AgreementEventMessage> {
  private readonly bot: TelegramBot;
  private readonly store: AgreementStore;
  private readonly reference: ReferenceRepository;

  constructor(
    private readonly ch: ClickHouse,
    opts: TelegramOptions,
    log: Logger,
    private readonly now: () => number,
  ) {
    super();
    this.bot = new TelegramBot(opts, log);
    this.store = new AgreementStore(ch);
    this.reference = new ReferenceRepository(ch);
  }

  process(message: KafkaMessage, partition: number): Outcome<void> {
    const frame = frameOf(message.value);
    const parsed = frame ? parseJson(frame.payload) : message.value ? parseJson(message.value) : deadLetter('empty message');
    if (parsed.kind !== 'ok') return parsed;
    if (!validateRfqEvent(parsed.value)) return deadLetter(`schema: ${describeErrors(validateRfqEvent.errors)}`);
    if (parsed.value.type === 'rfq' && parsed.value.status === 'draft') return skip('draft: nobody is told');
    this.enqueue(parsed.value, partition, message);
    return ok(undefined);
  }

  async flush(): Promise<void> {
    if (this.queue.length === 0) return;
    const [chats, organizations] = await Promise.all([this.reference.telegramChats(), this.reference.organizations()]);
    const makers = organizations.filter((o) => o.kind === 'market_maker').map((o) => o.slug);
    const rfqs = new Map<number, { title: string; invited: string[]; sealed: boolean; deadline: number } | undefined>();
    for (const { event } of this.queue) {
      const id = event.rfq ?? 0;
      if (id > 0 && !rfqs.has(id)) {
        const r = await this.store.one<RfqBody>('rfq', id);
        rfqs.set(id, r && rfqOf(r));
      }
    }
    const planned = this.queue.map((q) => noticesOf(q.event, rfqs.get(q.event.rfq ?? 0), makers, this.now()));
    const ids = [...new Set(this.queue.flatMap((q, i) => planned[i]!.map((n) => sentId(q.event.event_id, n.organization))))];
    const sent = await sentAlready(this.ch, RFQ_TELEGRAM_CHANNEL, ids);
    while (this.queue.length > 0) {
      const { event } = this.queue[0]!;
      for (const n of planned[0]!) {
        const id = sentId(event.event_id, n.organization);
        const chat = chats.get(n.organization);
        if (sent.has(id) || !chat) continue;
        await this.bot.send(chat, n.text);
        await markSent(this.ch, RFQ_TELEGRAM_CHANNEL, id, Date.now());
        sent.add(id);
      }
      this.queue.shift();
      planned.shift();
    }
  }
}

export function rfqTelegramNotifier(
  kafka: Kafka,
  ch: ClickHouse,
  config: Pick<Config, 'topicPrefix' | 'flushIntervalMs'>,
  opts: TelegramOptions,
  log: Logger,
  now: () => number,
): BatchConsumer {
  const topic = topicName(config, 'rfq.events');
  return new BatchConsumer(
    kafka,
    new RfqTelegramPipeline(ch, opts, log, now),
    { topic, dlqTopic: dlqTopicName(config, 'rfq.events'), groupId: config.topicPrefix + RFQ_TELEGRAM_GROUP, flushIntervalMs: config.flushIntervalMs },
    log.child('telegram-rfq'),
  );
}
