// The events of the stream as the hub keeps them: each read once from its topic, with what
// deciding its audience needs, and its frame encoded once for every subscriber (a minute's
// levels one by one, as subscribers ask for different ones).
import { LEVELS_BPS, levelName } from '../../domain/market/facts.ts';
import type { Rfq } from '../../domain/rfq/rfq.ts';
import type { MinuteEventMessage, TargetEventMessage } from '../../schemas/index.ts';

export const EVENT_TYPES = ['minute', 'target', 'loan', 'rfq'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The levels a minute shows when `bps` is not given. */
export const DEFAULT_BPS: readonly number[] = [10, 50, 100];

interface Base {
  /** Place in the hub's ring. */
  seq: number;
  /** Index of its partition in the layout, and its offset there. */
  tp: number;
  offset: number;
  /** The hub's position just after it (cursor.ts). */
  position: number[];
  /** The position encoded, made when first asked. */
  id?: string;
  /** Its frame's bytes (encodeEvent), kept while the event is among the hub's newest. */
  encoded?: Encoded;
  /** Its Kafka timestamp: the ring keeps what is younger than its horizon. */
  at: number;
  /** What identifies it when published twice. */
  key: string;
  asset: string;
}

export interface MinuteEvent extends Base {
  type: 'minute';
  exchange: string;
  pair: string;
  /** `exchange\0pair` (audience.ts pairKey). */
  pairKey: string;
  message: MinuteEventMessage;
}

export interface TargetEvent extends Base {
  type: 'target';
  exchange: string;
  pair: string;
  owner: { type: 'gb' | 'mm'; organization: string; asset: string };
  data: string;
}

export interface LoanEvent extends Base {
  type: 'loan';
  parties: { organization: string; market_maker: string };
  data: string;
  /** A draft moved to another market maker: what the one it was made to gets instead (`change` `withdrawn`). */
  former?: LoanEvent;
}

export interface RfqEvent extends Base {
  type: 'rfq';
  /** The RFQ the change belongs to, as it stands (a proposal's visibility depends on it). */
  rfq: Pick<Rfq, 'organization' | 'status' | 'invited' | 'sealed' | 'deadline'> | undefined;
  /** For a proposal: its market maker. */
  proposal: { market_maker: string } | undefined;
  data: string;
}

export type HubEvent = MinuteEvent | TargetEvent | LoanEvent | RfqEvent;

const LEVEL_INDEX = new Map<number, number>(LEVELS_BPS.map((l, i) => [l, i]));

/**
 * An event's frame as bytes, encoded once and shared by every subscriber given it: a
 * subscriber's write is the pieces it was given, copied together. A book minute's levels
 * differ by subscriber, so its data is kept in pieces: the fields everyone gets, each
 * level's field (encoded when first asked), and the close.
 */
export interface Encoded {
  /** `event: <type>\nid: <the event's own id>\ndata: `. */
  prefix: Buffer;
  /** The data up to the levels (a book minute), or the data and the blank line that ends the frame. */
  body: Buffer;
  /** A book minute's `,"bid_<L>bps":<v>` and `,"ask_<L>bps":<v>`, by index in L. */
  bid?: (Buffer | undefined)[];
  ask?: (Buffer | undefined)[];
  /** A book minute's `,"written_at":…}` and the blank line. */
  tail?: Buffer;
}

export function encodeEvent(e: HubEvent, id: string): Encoded {
  const prefix = Buffer.from(`event: ${e.type}\nid: ${id}\ndata: `);
  if (e.type !== 'minute') return { prefix, body: Buffer.from(`${e.data}\n\n`) };
  const m = e.message;
  const data: Record<string, unknown> = { exchange: e.exchange, pair: e.pair, asset: e.asset, timestamp: new Date(m.minute).toISOString(), source: m.source };
  if (m.source === 'book') {
    data.mid = m.mid ?? null;
    data.spread_bps = m.spread_bps ?? null;
  } else {
    data.volume = m.volume ?? null;
    data.vwap = m.vwap ?? null;
    data.trades = m.trades ?? 0;
  }
  const head = JSON.stringify(data).slice(0, -1);
  const tail = `,"written_at":"${new Date(m.written_at).toISOString()}"}\n\n`;
  // Trades carry no levels: one text for everyone.
  if (m.source !== 'book') return { prefix, body: Buffer.from(head + tail) };
  return { prefix, body: Buffer.from(head), bid: [], ask: [], tail: Buffer.from(tail) };
}

/**
 * Appends the pieces of the event's frame for a subscriber to `out`: with `id` when it is
 * not the event's own (a subscriber resuming from a process further on), and the levels it
 * asked for. Returns the bytes appended.
 */
export function appendFrame(out: Buffer[], e: HubEvent, enc: Encoded, levels: readonly number[], id?: string): number {
  const prefix = id === undefined ? enc.prefix : Buffer.from(`event: ${e.type}\nid: ${id}\ndata: `);
  out.push(prefix, enc.body);
  let n = prefix.length + enc.body.length;
  if (!enc.tail || e.type !== 'minute') return n;
  const m = e.message;
  for (const side of ['bid', 'ask'] as const) {
    const pieces = enc[side]!;
    const depth = side === 'bid' ? m.bid_depth : m.ask_depth;
    for (const l of levels) {
      const i = LEVEL_INDEX.get(l)!;
      const piece = (pieces[i] ??= Buffer.from(`,"${side}_${levelName(l)}bps":${numberText(depth?.[i])}`));
      out.push(piece);
      n += piece.length;
    }
  }
  out.push(enc.tail);
  return n + enc.tail.length;
}

// JSON.stringify, not String(): the same text without the engine's cache of number strings (row-text.ts).
const numberText = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? 'null' : JSON.stringify(v));

export function targetData(m: TargetEventMessage): string {
  return JSON.stringify({
    id: m.target_id,
    type: m.type,
    organization: m.organization,
    asset: m.asset,
    exchange: m.exchange,
    pair: m.pair,
    metric: m.metric,
    market_hours: m.market_hours,
    previous_status: m.previous_status,
    status: m.status,
    value: m.value,
    effective_threshold: m.effective_threshold,
    direction: m.direction,
    minute: m.minute,
  });
}

/** The top-level fields of a record that differ between two versions (history aside: it grows with every change). */
export function changedFields(before: Record<string, unknown> | undefined, after: Record<string, unknown>, statusBefore: string | undefined, statusAfter: string): string[] {
  if (!before) return [];
  const out = new Set<string>();
  if (statusBefore !== statusAfter) out.add('status');
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (k === 'history') continue;
    if (JSON.stringify(before[k]) !== JSON.stringify(after[k])) out.add(k);
  }
  return [...out].sort();
}

/** One SSE message: its type, its id, its data on one line. */
export const frame = (type: string, id: string | undefined, data: string) => `event: ${type}\n${id ? `id: ${id}\n` : ''}data: ${data}\n\n`;
