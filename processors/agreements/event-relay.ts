// Publishes every change of a loan, an RFQ or a proposal (a new version of its record,
// domain/agreements/store.ts) to loans.events or rfq.events: a transactional outbox. The
// API writes only the records; this relay reads the versions not yet marked as sent,
// publishes them, then marks them. A crash between publishing and marking publishes them
// again with the same event_id, which consumers drop (processors/targets/notifier.ts does):
// a change is published at least once and never lost.
import type { Producer } from 'kafkajs';
import { AgreementStore, eventIdOf, type AgreementRecord } from '../../domain/agreements/store.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import { sendInParts } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import type { AgreementEventMessage } from '../../schemas/index.ts';
import type { PolledJob } from '../shell/poller.ts';

/** The notifications_sent channel that marks versions already published. */
export const RELAY_CHANNEL = 'agreements';
/** How far back the relay looks for unpublished versions (a relay down longer than this skips them). */
export const RELAY_LOOKBACK_MS = 7 * 86_400_000;

export interface RelayTopics {
  /** Topic name and the 5-byte frame header of its registered schema. */
  loans: { topic: string; header: Buffer };
  rfq: { topic: string; header: Buffer };
}

export function eventOf(r: AgreementRecord<unknown>): AgreementEventMessage {
  const body = r.body as Record<string, unknown>;
  return {
    event_id: eventIdOf(r),
    type: r.kind,
    id: r.id,
    version: r.version,
    status: r.status,
    organization: r.organization,
    market_maker: r.market_maker,
    asset: r.asset,
    rfq: r.kind === 'rfq' ? r.id : r.parent > 0 ? r.parent : null,
    at: new Date(r.changed_at).toISOString(),
    by: r.changed_by,
    record: body,
  };
}

/** Run every few seconds by the service's Poller (processors/shell/poller.ts). */
export class AgreementEventRelay implements PolledJob {
  readonly name = 'agreement events relay';
  private readonly store: AgreementStore;

  constructor(
    private readonly ch: ClickHouse,
    private readonly producer: Producer,
    private readonly topics: RelayTopics,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    this.store = new AgreementStore(ch);
  }

  /** Publishes the versions not yet sent; the number published. */
  async runOnce(): Promise<number> {
    const changes = await this.store.changedSince(this.now() - RELAY_LOOKBACK_MS, RELAY_CHANNEL);
    if (changes.length === 0) return 0;
    const frame = (r: AgreementRecord<unknown>) => (r.kind === 'loan' ? this.topics.loans : this.topics.rfq);
    for (const target of [this.topics.loans, this.topics.rfq]) {
      const mine = changes.filter((r) => frame(r) === target);
      if (mine.length === 0) continue;
      await sendInParts(
        this.producer,
        target.topic,
        mine.map((r) => ({ key: `${r.kind}:${r.id}`, value: Buffer.concat([target.header, Buffer.from(JSON.stringify(eventOf(r)))]) })),
      );
    }
    const at = this.now();
    await this.ch.insert(
      'notifications_sent',
      changes.map((r) => ({ channel: RELAY_CHANNEL, event_id: eventIdOf(r), sent_at: at })),
    );
    return changes.length;
  }
}
