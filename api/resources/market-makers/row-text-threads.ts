// Writes the text of packed rows (row-text.ts) on both cores: about half the groups in a
// helper thread, the rest on the caller's thread in slices between which the event loop
// runs, so other requests are not held for the whole answer. A month of rows is over a
// second of writing numbers on one core. The helper is one for the process, started when
// the API starts (or at the first answer); while it is not ready, or if it fails, the
// caller's thread writes everything: an answer never waits for the helper to come back.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { HelperThread } from '../../../lib/helper-thread.ts';
import { encodeTables, writeGroups, type PackedRows, type WrittenGroups } from './row-text.ts';

export interface RowTextRequest {
  rows: PackedRows;
}

/** Fewer rows than this are written on the caller's thread alone: the hand-over costs more than it saves. */
const HELPER_MIN_ROWS = 2000;
/** Rows the caller's thread writes between two turns of the event loop. */
const SLICE_ROWS = 1000;

const ENTRY = new URL('./row-text-thread.mjs', import.meta.url);

/** The written text of every group of some packed rows. */
export interface WrittenText {
  /** Group g's bytes. */
  group(g: number): Uint8Array;
}

const thread = new HelperThread<RowTextRequest, WrittenGroups>(ENTRY, 'row text thread');

/** Writes the rows `part` makes in the helper thread; undefined, nothing made, when it is not ready (started now if gone). */
function writeInThread(part: () => PackedRows): Promise<WrittenGroups> | undefined {
  thread.start();
  if (!thread.ready) return undefined;
  const rows = part();
  return thread.call({ rows }, [rows.rows.buffer as ArrayBuffer]);
}

/** Rows the helper thread has written, for the benchmark and the tests to see it at work. */
export const rowTextHelped = { rows: 0 };

/** Starts the helper thread, so that the first answer finds it ready. */
export function startRowTextHelper(): void {
  thread.start();
}

/** Groups [from, to) of `p` as packed rows of their own, their numbers copied (to be handed over). */
function partOf(p: PackedRows, from: number, to: number): PackedRows {
  const width = 2 + p.keys.length;
  const first = from === 0 ? 0 : p.groupEnds[from - 1]!;
  const ends = p.groupEnds.slice(from, to).map((e) => e - first);
  return { ...p, rows: p.rows.slice(first * width, p.groupEnds[to - 1]! * width), groupEnds: ends };
}

/** Groups [from, to) written on this thread, a slice of rows at a time. */
async function writeHere(p: PackedRows, from: number, to: number): Promise<WrittenGroups[]> {
  const parts: WrittenGroups[] = [];
  const tables = encodeTables(p);
  let g = from;
  while (g < to) {
    if (g > from) await nextTurn();
    const start = g === 0 ? 0 : p.groupEnds[g - 1]!;
    let end = g + 1;
    while (end < to && p.groupEnds[end]! - start < SLICE_ROWS) end++;
    parts.push(writeGroups(p, g, end, tables));
    g = end;
  }
  return parts;
}

/** Every group's text of `p`, written here and, for many rows, in the helper thread too. */
export async function writeRowText(p: PackedRows): Promise<WrittenText> {
  const groups = p.groupEnds.length;
  const rows = groups === 0 ? 0 : p.groupEnds[groups - 1]!;
  // The helper takes the later groups, about half the rows.
  let split = groups;
  if (rows >= HELPER_MIN_ROWS) {
    split = 0;
    while (split < groups && p.groupEnds[split]! < rows / 2) split++;
    split = Math.min(groups, split + 1);
  }
  const away = split < groups ? writeInThread(() => partOf(p, split, groups)) : undefined;
  if (!away) split = groups;
  const here = await writeHere(p, 0, split);
  let there: WrittenGroups[] = [];
  if (away) {
    try {
      there = [await away];
      rowTextHelped.rows += p.groupEnds[groups - 1]! - p.groupEnds[split - 1]!;
    } catch {
      there = await writeHere(p, split, groups);
    }
  }
  // Group g in the parts written, in order.
  const parts = [...here, ...there];
  const starts: number[] = [];
  let n = 0;
  for (const part of parts) {
    starts.push(n);
    n += part.ends.length;
  }
  return {
    group(g: number): Uint8Array {
      let i = parts.length - 1;
      while (starts[i]! > g) i--;
      const part = parts[i]!;
      const k = g - starts[i]!;
      // After the comma that follows the group before.
      return part.bytes.subarray(k === 0 ? 0 : part.ends[k - 1]! + 1, part.ends[k]!);
    },
  };
}
