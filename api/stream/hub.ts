// The event stream's hub, one per API process: it reads the stream topics from Kafka (the
// processors' written minutes and the target, loan and RFQ changes), keeps the last hour of
// their events in one ring shared by every subscriber, and moves each subscriber along the
// ring as its connection takes what it is sent.
//
// - Several API processes each read every partition of the topics (a consumer group of its
//   own, started at the offsets of an hour ago), so an event id (cursor.ts) means the same
//   everywhere, and a restarted process rebuilds its ring from Kafka: a client resumes from
//   any of them, also after a restart, in order and without duplicates.
// - A subscriber is a place in the ring: nothing is copied per subscriber. One that stops
//   taking what it is sent (its socket's buffer full) falls behind; past `maxLagEvents` of
//   events read since it connected, it gets `reset` and is closed. Others never wait for it.
// - Every few seconds each subscriber's access is checked again (a token or key revoked, a
//   membership ended: the stream ends) and its audience read again.
import crypto from 'node:crypto';
import type { Admin, Consumer, Kafka, KafkaMessage } from 'kafkajs';
import { AgreementStore } from '../../domain/agreements/store.ts';
import { rfqOf, type RfqBody, type RfqStatus } from '../../domain/rfq/rfq.ts';
import type { ReferenceSnapshot } from '../../domain/reference/repository.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Config } from '../../lib/config.ts';
import { topicName, type BaseTopic } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import { frameOf } from '../../lib/schema-registry.ts';
import {
  validateLoanEvent,
  validateMinuteEvent,
  validateRfqEvent,
  validateTargetEvent,
  type AgreementEventMessage,
  type MinuteEventMessage,
  type TargetEventMessage,
} from '../../schemas/index.ts';
import { reaches, pairKey, type Audience } from './audience.ts';
import { encode, later, notAhead, type Layout, type Position } from './cursor.ts';
import { appendFrame, changedFields, encodeEvent, frame, targetData, type HubEvent, type LoanEvent } from './events.ts';

/** The topics of the stream, in the order of the layout. */
export const STREAM_TOPICS = ['market.minutes', 'targets.events', 'loans.events', 'rfq.events'] as const satisfies readonly BaseTopic[];

/** A subscriber to more pairs' minutes than this is asked for every minute rather than indexed by pair. */
const INDEXED_PAIRS = 256;

/** Frames a subscriber gathers before they are written without waiting for the flush. */
const MAX_PENDING = 256;

/** Messages read between two turns of the event loop. */
const YIELD_EVERY = 256;

/**
 * The newest events whose frames stay encoded: those being handed to live subscribers;
 * older ones are encoded again for a client that resumes.
 */
const ENCODED_EVENTS = 8192;

export interface StreamOptions {
  /** How far back a client may resume (the ring keeps at least this much). */
  horizonMs: number;
  /** The most events the ring keeps, whatever their age: its memory bound. */
  maxEvents: number;
  /** Events a subscriber may fall behind, among those read since it connected, before it is reset and closed. */
  maxLagEvents: number;
  /** A comment line at least this often. */
  heartbeatMs: number;
  /** How often each subscriber's access is checked again. */
  recheckMs: number;
}

export const STREAM_DEFAULTS: StreamOptions = {
  // An hour, and a margin for the client's own reconnect.
  horizonMs: 65 * 60_000,
  maxEvents: 400_000,
  maxLagEvents: 20_000,
  heartbeatMs: 10_000,
  recheckMs: 3_000,
};

/** What `check` answers: go on, go on with a new audience, or end the stream. */
export type CheckResult = { kind: 'same' } | { kind: 'audience'; audience: Audience } | { kind: 'end'; reason: string };

/** Results shared by the checks of one round (many subscribers share a user, a token or a key). */
export type CheckMemo = Map<string, Promise<unknown>>;

/** One open stream: its connection and the caller's audience. */
export interface SubscriberOptions {
  write(chunk: string | Buffer): boolean;
  onDrain(then: () => void): void;
  end(): void;
  audience: Audience;
  check(memo: CheckMemo): Promise<CheckResult>;
}

class Subscriber {
  nextSeq = 0;
  /** The ring's end when it connected: its lag counts from there. */
  liveFrom = 0;
  waiting = false;
  closed = false;
  /** Whether its cursor may be ahead of the hub's position (it resumed from a process further on). */
  ahead = true;
  /** The pieces of the frames given since the last flush (hub.scheduleFlush), their bytes and frames. */
  pending: Buffer[] = [];
  pendingBytes = 0;
  pendingFrames = 0;
  /**
   * Caught up, keeping up, not ahead: then only the events it may get need touch it (the
   * hub's minute index), and its place jumps to each of them; otherwise it walks the ring.
   */
  live = false;
  constructor(
    readonly io: SubscriberOptions,
    public audience: Audience,
    public cursor: Position,
  ) {}
}

export interface HubDeps {
  kafka: Kafka;
  config: Pick<Config, 'topicPrefix'>;
  log: Logger;
  now: () => number;
  /** Reads the agreement versions a change is compared with, and a proposal's RFQ. */
  ch: ClickHouse;
  referenceLists: ReferenceSnapshot;
}

export type Attached = { kind: 'live'; id: string } | { kind: 'resumed' } | { kind: 'reset'; id: string };

export class StreamHub {
  readonly options: StreamOptions;
  layout: Layout = { partitions: [] };
  /** Next offset of each partition the hub will read. */
  private position: Position = [];
  /** Per partition, the offset from which the ring holds every event. */
  private floor: Position = [];
  /** The topics' ends when the hub started: where a new subscriber starts while the ring fills. */
  private startEnd: Position = [];
  private readonly tpIndex = new Map<string, number>();
  private ring: HubEvent[] = [];
  /** seq of ring[0], and of the next event. */
  private baseSeq = 0;
  private head = 0;
  private nextSeq = 0;
  private readonly keys = new Map<string, number>();
  private readonly subscribers = new Set<Subscriber>();
  private consumer: Consumer | undefined;
  private admin: Admin | undefined;
  private groupId = '';
  private timers: NodeJS.Timeout[] = [];
  private rechecking = false;
  /** Rounds of checks completed. */
  private rechecks = 0;
  private toFlush: Subscriber[] = [];
  /** Subscribers that walk the ring (not live), and where the live ones wait for minutes: by pair, or for every pair. */
  private readonly walking = new Set<Subscriber>();
  private readonly byPair = new Map<string, Set<Subscriber>>();
  private readonly everyPair = new Set<Subscriber>();
  private flushing = false;
  private readonly store: AgreementStore;
  /** The last version seen of each agreement record, to say what a change changed. */
  private readonly lastVersions = new Map<string, { version: number; status: string; record: Record<string, unknown> }>();
  private pairAssets: { lists: unknown; map: Map<string, string> } | undefined;
  /** The events holding their encoded frames, oldest first. */
  private readonly encoded = new Set<HubEvent>();

  constructor(
    private readonly deps: HubDeps,
    options: Partial<StreamOptions> = {},
  ) {
    this.options = { ...STREAM_DEFAULTS, ...options };
    this.store = new AgreementStore(deps.ch);
  }

  /** Joins the topics at the offsets of `horizonMs` ago; the ring fills in the background. */
  async start(): Promise<void> {
    const { kafka, config, now } = this.deps;
    const admin = kafka.admin();
    this.admin = admin;
    await admin.connect();
    const since = now() - this.options.horizonMs;
    const partitions: number[] = [];
    this.groupId = `${config.topicPrefix}stream.${crypto.randomUUID()}`;
    for (const base of STREAM_TOPICS) {
      const topic = topicName(config, base);
      const ends = (await settled(() => admin.fetchTopicOffsets(topic))).sort((a, b) => a.partition - b.partition);
      const starts = new Map((await settled(() => admin.fetchTopicOffsetsByTimestamp(topic, since))).map((p) => [p.partition, Number(p.offset)]));
      partitions.push(ends.length);
      for (const p of ends) {
        this.tpIndex.set(`${topic}\u0000${p.partition}`, this.position.length);
        const end = Number(p.high);
        const start = Math.max(Number(p.low), Math.min(starts.get(p.partition) ?? end, end));
        this.position.push(start);
        this.floor.push(start);
        this.startEnd.push(end);
      }
    }
    this.layout = { partitions };
    const consumer = kafka.consumer({ groupId: this.groupId, sessionTimeout: 30_000, heartbeatInterval: 3_000, maxWaitTimeInMs: 250 });
    this.consumer = consumer;
    await consumer.connect();
    // A group of its own that commits nothing. It starts from the beginning and is moved to
    // where the ring starts; whatever it reads before the move is behind that and skipped.
    await consumer.subscribe({ topics: STREAM_TOPICS.map((t) => topicName(config, t)), fromBeginning: true });
    consumer.on(consumer.events.GROUP_JOIN, () => this.seekAll());
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat, isRunning, isStale }) => {
        let n = 0;
        for (const message of batch.messages) {
          if (!isRunning() || isStale()) break;
          await this.ingest(batch.topic, batch.partition, message);
          // Let the sockets take what they were given: in a burst, subscribers that keep up
          // are not counted behind for want of a turn of the event loop.
          if (++n % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
        }
        await heartbeat();
        await new Promise((resolve) => setImmediate(resolve));
      },
    });
    this.seekAll();
    this.timers.push(setInterval(() => this.heartbeat(), this.options.heartbeatMs));
    this.timers.push(setInterval(() => void this.recheck(), this.options.recheckMs));
  }

  private seekAll(): void {
    for (const [key, tp] of this.tpIndex) {
      const [topic, partition] = key.split('\u0000');
      this.consumer?.seek({ topic: topic!, partition: Number(partition), offset: String(this.position[tp]) });
    }
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    for (const s of [...this.subscribers]) this.close(s);
    await this.consumer?.disconnect().catch(() => undefined);
    if (this.admin && this.groupId) await this.admin.deleteGroups([this.groupId]).catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
  }

  /**
   * Whether a position is past the topics' ends in some partition: no position the stream
   * ever gave (a made-up id). One ahead of what this process has read may be another
   * process's, so the topics' ends are asked only then.
   */
  async pastTheEnd(p: Position): Promise<boolean> {
    if (notAhead(p, this.position) || !this.admin) return false;
    const ends: Position = [];
    for (const base of STREAM_TOPICS) {
      const offsets = (await this.admin.fetchTopicOffsets(topicName(this.deps.config, base))).sort((a, b) => a.partition - b.partition);
      for (const o of offsets) ends.push(Number(o.high));
    }
    return ends.length !== p.length || p.some((o, i) => o > ends[i]!);
  }

  stats() {
    return { subscribers: this.subscribers.size, events: this.nextSeq - this.head, position: [...this.position], caughtUp: notAhead(this.startEnd, this.position), rechecks: this.rechecks };
  }

  /**
   * Adds a subscriber: from `resume` (the position of its Last-Event-ID) when the ring still
   * holds everything after it, otherwise from now, with `reset` when it asked for more than
   * the ring holds. Returns how it was attached, for the first lines the route writes.
   */
  attach(io: SubscriberOptions, resume: Position | 'other-layout' | undefined): { attached: Attached; start: () => void; detach: () => void } {
    const fresh = later(this.position, this.startEnd);
    let attached: Attached;
    let sub: Subscriber;
    if (resume !== undefined && resume !== 'other-layout' && resume.every((o, i) => o >= this.floor[i]!)) {
      sub = new Subscriber(io, io.audience, [...resume]);
      sub.nextSeq = this.head;
      attached = { kind: 'resumed' };
    } else {
      sub = new Subscriber(io, io.audience, fresh);
      sub.nextSeq = this.nextSeq;
      attached = resume === undefined ? { kind: 'live', id: encode(this.layout, fresh) } : { kind: 'reset', id: encode(this.layout, fresh) };
    }
    sub.liveFrom = this.nextSeq;
    // A new subscriber sees only events after the hub's position; one resuming walks older
    // ones, whose positions may be behind its cursor (idFor clears `ahead` once they are not).
    if (attached.kind !== 'resumed') sub.ahead = !notAhead(sub.cursor, this.position);
    this.subscribers.add(sub);
    this.walking.add(sub);
    this.index(sub);
    return {
      attached,
      start: () => this.pump(sub),
      detach: () => {
        sub.closed = true;
        this.forget(sub);
      },
    };
  }

  private pump(sub: Subscriber): void {
    if (sub.closed) return;
    const now = this.deps.now();
    while (sub.nextSeq < this.nextSeq) {
      if (sub.nextSeq < this.head) return this.reset(sub, 'The stream moved past what this connection had read.');
      if (sub.waiting) {
        if (this.nextSeq - Math.max(sub.nextSeq, sub.liveFrom) > this.options.maxLagEvents) this.reset(sub, 'This connection fell too far behind.');
        return;
      }
      const e = this.ring[sub.nextSeq - this.baseSeq]!;
      sub.nextSeq++;
      if (e.offset < sub.cursor[e.tp]!) continue;
      sub.cursor[e.tp] = e.offset + 1;
      const shown = reaches(sub.audience, e, now) ? e : e.type === 'loan' && e.former && reaches(sub.audience, e.former, now) ? e.former : undefined;
      if (!shown) continue;
      sub.pendingBytes += appendFrame(sub.pending, shown, this.encodedOf(shown), sub.audience.levels, this.ownId(sub, e));
      if (++sub.pendingFrames === 1) this.toFlush.push(sub);
      // A subscriber resuming takes the ring in pieces: the socket is asked between them.
      if (sub.pendingFrames >= MAX_PENDING) {
        this.flushOne(sub);
        if (sub.waiting) return;
      }
    }
    if (!sub.live && !sub.waiting && !sub.ahead) {
      sub.live = true;
      this.walking.delete(sub);
    }
    this.scheduleFlush();
  }

  /**
   * What pump gave each subscriber since the last turn of the event loop goes in one write:
   * a minute's close is hundreds of events, and a write per event and subscriber would be
   * most of the stream's cost.
   */
  private scheduleFlush(): void {
    if (this.flushing || this.toFlush.length === 0) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      const subs = this.toFlush;
      this.toFlush = [];
      for (const s of subs) this.flushOne(s);
    });
  }

  private flushOne(sub: Subscriber): void {
    if (sub.pendingFrames === 0) return;
    const chunk = Buffer.concat(sub.pending, sub.pendingBytes);
    this.clearPending(sub);
    if (sub.closed) return;
    if (!sub.io.write(chunk) && !sub.waiting) {
      sub.waiting = true;
      // Its place is right: it walks the ring again from there.
      sub.live = false;
      this.walking.add(sub);
      sub.io.onDrain(() => {
        sub.waiting = false;
        this.pump(sub);
      });
    }
  }

  private clearPending(sub: Subscriber): void {
    sub.pending = [];
    sub.pendingBytes = 0;
    sub.pendingFrames = 0;
  }

  /** The event's frame, encoded once for every subscriber given it; the oldest encodings are let go. */
  private encodedOf(e: HubEvent) {
    if (e.encoded) return e.encoded;
    e.encoded = encodeEvent(e, (e.id ??= encode(this.layout, e.position)));
    this.encoded.add(e);
    if (this.encoded.size > ENCODED_EVENTS) {
      const oldest = this.encoded.values().next().value!;
      this.encoded.delete(oldest);
      oldest.encoded = undefined;
    }
    return e.encoded;
  }

  /** The id the subscriber is given with the event: undefined for the event's own. */
  private ownId(sub: Subscriber, e: HubEvent): string | undefined {
    if (sub.ahead && notAhead(sub.cursor, e.position)) sub.ahead = false;
    return sub.ahead ? encode(this.layout, later(sub.cursor, e.position)) : undefined;
  }

  private reset(sub: Subscriber, reason: string): void {
    if (sub.closed) return;
    sub.pending.push(Buffer.from(frame('reset', undefined, JSON.stringify({ reason }))));
    sub.io.write(Buffer.concat(sub.pending));
    this.clearPending(sub);
    this.close(sub);
  }

  private close(sub: Subscriber): void {
    if (sub.closed) return;
    sub.closed = true;
    this.forget(sub);
    sub.io.end();
  }

  private forget(sub: Subscriber): void {
    this.subscribers.delete(sub);
    this.walking.delete(sub);
    this.unindex(sub);
  }

  private index(sub: Subscriber): void {
    const a = sub.audience;
    if (!a.types.has('minute')) return;
    if (a.minutePairs.size > INDEXED_PAIRS) {
      this.everyPair.add(sub);
      return;
    }
    for (const k of a.minutePairs) {
      let set = this.byPair.get(k);
      if (!set) this.byPair.set(k, (set = new Set()));
      set.add(sub);
    }
  }

  private unindex(sub: Subscriber): void {
    this.everyPair.delete(sub);
    for (const k of sub.audience.minutePairs) {
      const set = this.byPair.get(k);
      if (set?.delete(sub) && set.size === 0) this.byPair.delete(k);
    }
  }

  /** After an event is added to the ring: the subscribers it may concern. */
  private fanOut(e: HubEvent): void {
    for (const s of this.walking) this.pump(s);
    if (e.type !== 'minute') {
      for (const s of this.subscribers) if (s.live) this.pumpLive(s, e);
      return;
    }
    for (const s of this.everyPair) if (s.live) this.pumpLive(s, e);
    const set = this.byPair.get(e.pairKey);
    if (set) for (const s of set) if (s.live) this.pumpLive(s, e);
  }

  /** A live subscriber skips the events it could not get (none was for it) straight to this one. */
  private pumpLive(sub: Subscriber, e: HubEvent): void {
    // It may have walked to it already, having caught up on this very event.
    if (sub.nextSeq > e.seq) return;
    sub.nextSeq = e.seq;
    this.pump(sub);
  }

  private heartbeat(): void {
    for (const s of this.subscribers) if (!s.waiting && s.pendingFrames === 0) s.io.write(': keep-alive\n\n');
  }

  private async recheck(): Promise<void> {
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      const memo: CheckMemo = new Map();
      await Promise.all(
        [...this.subscribers].map(async (s) => {
          try {
            const r = await s.io.check(memo);
            if (s.closed) return;
            if (r.kind === 'end') this.close(s);
            else if (r.kind === 'audience') {
              this.unindex(s);
              s.audience = r.audience;
              this.index(s);
            }
          } catch (e) {
            // Access that cannot be checked is not assumed: the stream ends, the client reconnects.
            this.deps.log.warn('stream access check failed', { err: e as Error });
            this.close(s);
          }
        }),
      );
    } finally {
      this.rechecking = false;
      this.rechecks++;
    }
  }

  private async ingest(topic: string, partition: number, message: KafkaMessage): Promise<void> {
    const tp = this.tpIndex.get(`${topic}\u0000${partition}`);
    if (tp === undefined) return;
    const offset = Number(message.offset);
    if (offset < this.position[tp]!) return;
    const base = STREAM_TOPICS[this.topicOf(tp)]!;
    let event: HubEvent | undefined;
    try {
      event = await this.decode(base, message, tp, offset);
    } catch (e) {
      this.deps.log.warn('stream event not read', { topic, partition, offset, err: e as Error });
    }
    this.position[tp] = offset + 1;
    if (!event) return;
    if (this.keys.has(event.key)) return;
    event.position = [...this.position];
    if (event.type === 'loan' && event.former) event.former.position = event.position;
    this.keys.set(event.key, event.seq);
    this.ring.push(event);
    this.nextSeq++;
    this.evict();
    this.fanOut(event);
  }

  private topicOf(tp: number): number {
    let n = 0;
    for (let t = 0; t < this.layout.partitions.length; t++) {
      n += this.layout.partitions[t]!;
      if (tp < n) return t;
    }
    return -1;
  }

  private evict(): void {
    const oldest = this.deps.now() - this.options.horizonMs;
    while (this.head < this.nextSeq) {
      const e = this.ring[this.head - this.baseSeq]!;
      if (this.nextSeq - this.head <= this.options.maxEvents && e.at >= oldest) break;
      this.floor[e.tp] = Math.max(this.floor[e.tp]!, e.offset + 1);
      if (this.keys.get(e.key) === e.seq) this.keys.delete(e.key);
      this.head++;
    }
    // Drop the evicted entries from the array once they are half of it.
    const gone = this.head - this.baseSeq;
    if (gone > 1024 && gone * 2 > this.ring.length) {
      this.ring = this.ring.slice(gone);
      this.baseSeq = this.head;
    }
  }

  private async decode(base: (typeof STREAM_TOPICS)[number], message: KafkaMessage, tp: number, offset: number): Promise<HubEvent | undefined> {
    const payload = frameOf(message.value)?.payload ?? message.value;
    if (!payload) return undefined;
    const value: unknown = JSON.parse(payload.toString('utf8'));
    const common = { seq: this.nextSeq, tp, offset, position: [] as number[], at: Number(message.timestamp) };
    switch (base) {
      case 'market.minutes': {
        if (!validateMinuteEvent(value)) throw new Error('not a market.minutes message');
        const m = value as MinuteEventMessage;
        const key = pairKey(m.exchange, m.pair);
        return { ...common, type: 'minute', key: `minute:${m.source}:${key}:${m.minute}`, exchange: m.exchange, pair: m.pair, pairKey: key, asset: await this.assetOf(key), message: m };
      }
      case 'targets.events': {
        if (!validateTargetEvent(value)) throw new Error('not a targets.events message');
        const m = value as TargetEventMessage;
        return {
          ...common,
          type: 'target',
          key: `target:${m.event_id}`,
          asset: m.asset,
          exchange: m.exchange,
          pair: m.pair,
          owner: { type: m.type, organization: m.organization, asset: m.asset },
          data: targetData(m),
        };
      }
      case 'loans.events':
      case 'rfq.events': {
        const validate = base === 'loans.events' ? validateLoanEvent : validateRfqEvent;
        if (!validate(value)) throw new Error(`not a ${base} message`);
        const m = value as AgreementEventMessage;
        const key = `${m.type}:${m.id}:${m.version}`;
        if (this.keys.has(key)) return undefined;
        const before = await this.previousVersion(m);
        const fields = {
          ...(m.type === 'loan' ? {} : { kind: m.type, rfq: m.rfq }),
          id: m.id,
          version: m.version,
          status: m.status,
          previous_status: before?.status ?? null,
          change: m.version === 1 ? 'created' : 'updated',
          changed: changedFields(before?.record, m.record, before?.status, m.status),
          organization: m.organization,
          market_maker: m.market_maker || null,
          asset: m.asset,
          at: m.at,
        };
        const data = JSON.stringify(fields);
        if (m.type === 'loan') {
          const event: LoanEvent = { ...common, type: 'loan', key, asset: m.asset, parties: { organization: m.organization, market_maker: m.market_maker }, data };
          // A draft given to another market maker: the one it was made to no longer sees it,
          // and is told so without learning whom it went to.
          const was = before?.record.market_maker;
          if (typeof was === 'string' && was !== m.market_maker) {
            const withdrawn = JSON.stringify({ ...fields, change: 'withdrawn', market_maker: null });
            event.former = { ...event, parties: { organization: m.organization, market_maker: was }, data: withdrawn };
          }
          return event;
        }
        const rfq = m.type === 'rfq' ? rfqFields(m.organization, m.status, m.record) : await this.rfqOf(m.rfq);
        return { ...common, type: 'rfq', key, asset: m.asset, rfq, proposal: m.type === 'proposal' ? { market_maker: m.market_maker } : undefined, data };
      }
    }
  }

  private async assetOf(key: string): Promise<string> {
    const lists = await this.deps.referenceLists.lists();
    if (this.pairAssets?.lists !== lists) this.pairAssets = { lists, map: new Map(lists.pairs.map((p) => [pairKey(p.exchange, p.pair), p.asset])) };
    return this.pairAssets.map.get(key) ?? '';
  }

  /** The version before this one: kept from the last change seen, or read. */
  private async previousVersion(m: AgreementEventMessage): Promise<{ status: string; record: Record<string, unknown> } | undefined> {
    const k = `${m.type}:${m.id}`;
    const last = this.lastVersions.get(k);
    this.lastVersions.delete(k);
    this.lastVersions.set(k, { version: m.version, status: m.status, record: m.record });
    if (this.lastVersions.size > 20_000) this.lastVersions.delete(this.lastVersions.keys().next().value!);
    if (m.version === 1) return undefined;
    if (last?.version === m.version - 1) return last;
    const versions = await this.store.versions<Record<string, unknown>>(m.type, m.id);
    const prev = versions.find((v) => v.version === m.version - 1);
    return prev && { status: prev.status, record: prev.body };
  }

  private async rfqOf(id: number | null): Promise<NonNullable<Extract<HubEvent, { type: 'rfq' }>['rfq']> | undefined> {
    if (id === null) return undefined;
    const r = await this.store.one<RfqBody>('rfq', id);
    if (!r) return undefined;
    const q = rfqOf(r);
    return { organization: q.organization, status: q.status, invited: q.invited, sealed: q.sealed, deadline: q.deadline };
  }
}

/** A read of a topic just created, tried again while its leaders settle (NOT_LEADER_FOR_PARTITION and the like). */
async function settled<T>(read: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await read();
    } catch (e) {
      if ((e as { retriable?: boolean }).retriable !== true || Date.now() > end) throw e;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function rfqFields(organization: string, status: string, record: Record<string, unknown>) {
  return {
    organization,
    status: status as RfqStatus,
    invited: Array.isArray(record.invited) ? (record.invited as string[]) : [],
    sealed: record.sealed === true,
    deadline: typeof record.deadline === 'number' ? record.deadline : 0,
  };
}

