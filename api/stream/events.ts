// The events of the stream as the hub keeps them: each read once from its topic, with what
// deciding its audience needs, and its `data` rendered once (a minute's once per set of
// levels asked).
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
  /** Its data per set of levels, for the few sets subscribers share. */
  rendered?: Map<string, string>;
  /** Its data's fields but the levels, as text without the closing brace. */
  head?: string;
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

const RENDERED_SETS = 8;
const LEVEL_INDEX = new Map<number, number>(LEVELS_BPS.map((l, i) => [l, i]));

/** A minute's data with the depth at the levels asked (`bid_<L>bps`, `ask_<L>bps`, the summary's names). */
export function minuteData(e: MinuteEvent, levels: readonly number[], levelsKey: string): string {
  const m = e.message;
  // Trades carry no levels: one text for everyone.
  const key = m.source === 'trades' ? '' : levelsKey;
  const hit = e.rendered?.get(key);
  if (hit !== undefined) return hit;
  // The fields every subscriber gets, once; then the levels of this one, as text.
  if (e.head === undefined) {
    const data: Record<string, unknown> = { exchange: e.exchange, pair: e.pair, asset: e.asset, timestamp: new Date(m.minute).toISOString(), source: m.source };
    if (m.source === 'book') {
      data.mid = m.mid ?? null;
      data.spread_bps = m.spread_bps ?? null;
    } else {
      data.volume = m.volume ?? null;
      data.vwap = m.vwap ?? null;
      data.trades = m.trades ?? 0;
    }
    e.head = JSON.stringify(data).slice(0, -1);
  }
  let text = e.head;
  if (m.source === 'book') {
    for (const side of ['bid', 'ask'] as const) {
      const depth = side === 'bid' ? m.bid_depth : m.ask_depth;
      for (const l of levels) text += `,"${side}_${levelName(l)}bps":${numberText(depth?.[LEVEL_INDEX.get(l)!])}`;
    }
  }
  text += `,"written_at":"${new Date(m.written_at).toISOString()}"}`;
  e.rendered ??= new Map();
  if (e.rendered.size < RENDERED_SETS) e.rendered.set(key, text);
  return text;
}

const numberText = (v: number | undefined): string => (v === undefined || !Number.isFinite(v) ? 'null' : String(v));

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
