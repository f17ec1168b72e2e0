// The helper thread of row-text-threads.ts: writes the groups of packed rows it is sent.
import { parentPort } from 'node:worker_threads';
import { writeGroups, type PackedRows, type WrittenGroups } from './row-text.ts';
import type { HelperReply } from '../../../lib/helper-thread.ts';
import type { RowTextRequest } from './row-text-threads.ts';

const port = parentPort!;
port.on('message', ({ id, rows }: RowTextRequest & { id: number }) => {
  let reply: HelperReply<WrittenGroups>;
  let transfer: ArrayBuffer[] = [];
  try {
    const { bytes, ends } = writeGroups(rows as PackedRows);
    reply = { id, bytes, ends };
    transfer = [bytes.buffer as ArrayBuffer, ends.buffer as ArrayBuffer];
  } catch (e) {
    reply = { id, error: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply, transfer);
});
port.postMessage({ ready: true } satisfies HelperReply<WrittenGroups>);
