// The helper thread of zstd.ts: compresses each text of a batch into a frame of its own.
import { parentPort } from 'node:worker_threads';
import { Zstd } from '@hpcc-js/wasm-zstd';
import type { HelperReply } from '../../lib/helper-thread.ts';
import { ZSTD_LEVEL, type ZstdBatch } from './zstd.ts';

const port = parentPort!;
// Listening at once: a batch sent while the WebAssembly is compiled waits for it.
const loading = Zstd.load();
port.on('message', async ({ id, bytes, ends }: ZstdBatch & { id: number }) => {
  let reply: HelperReply<ZstdBatch>;
  let transfer: ArrayBuffer[] = [];
  try {
    const zstd = await loading;
    const frames: Uint8Array[] = [];
    let from = 0;
    for (const end of ends) {
      frames.push(zstd.compress(bytes.subarray(from, end), ZSTD_LEVEL));
      from = end;
    }
    const out = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
    const outEnds = new Uint32Array(frames.length);
    let at = 0;
    frames.forEach((f, i) => {
      out.set(f, at);
      outEnds[i] = at += f.length;
    });
    reply = { id, bytes: out, ends: outEnds };
    transfer = [out.buffer, outEnds.buffer];
  } catch (e) {
    reply = { id, error: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply, transfer);
});
