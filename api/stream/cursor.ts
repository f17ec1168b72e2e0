// Where a stream is in the topics it reads, as the SSE `id` of each event: the next offset
// of every partition of every stream topic, so any API process (all read the same topics)
// can resume a client after the last event it got, in order and without duplicates.
//
//   1:3-1-1-1:2s.1k.0.5.0.b
//   ^ version; the partitions of each topic (the layout); each partition's next offset, base 36
//
// An id of another layout (a topic's partitions changed) is understood as "too old": the
// client gets `reset`. Text that is no id of ours is refused.

export interface Layout {
  /** The topics in their order, each with its partitions 0..n-1. */
  partitions: readonly number[];
}

export type Position = number[];

const ID = /^1:(\d{1,4}(?:-\d{1,4}){0,15}):([0-9a-z]{1,12}(?:\.[0-9a-z]{1,12}){0,255})$/;

export const layoutKey = (layout: Layout) => layout.partitions.join('-');

/** The total number of partitions: the length of a position. */
export const width = (layout: Layout) => layout.partitions.reduce((n, p) => n + p, 0);

export function encode(layout: Layout, position: readonly number[]): string {
  return `1:${layoutKey(layout)}:${position.map((o) => o.toString(36)).join('.')}`;
}

export type Decoded = { kind: 'ok'; position: Position } | { kind: 'other-layout' } | { kind: 'invalid' };

export function decode(layout: Layout, text: string): Decoded {
  const m = ID.exec(text);
  if (!m) return { kind: 'invalid' };
  const offsets = m[2]!.split('.').map((x) => parseInt(x, 36));
  if (offsets.some((o) => !Number.isSafeInteger(o))) return { kind: 'invalid' };
  const counts = m[1]!.split('-').map(Number);
  if (counts.reduce((n, c) => n + c, 0) !== offsets.length) return { kind: 'invalid' };
  if (m[1] !== layoutKey(layout)) return { kind: 'other-layout' };
  return { kind: 'ok', position: offsets };
}

/** Each partition's greater offset. */
export function later(a: readonly number[], b: readonly number[]): Position {
  return a.map((x, i) => Math.max(x, b[i]!));
}

/** Whether a is at or behind b in every partition. */
export function notAhead(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i]! > b[i]!) return false;
  return true;
}
