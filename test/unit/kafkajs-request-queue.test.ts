// kafkajs' request queue, as lib/kafka.ts leaves it (lib/kafkajs-request-queue.ts): its
// check is re-armed only while requests wait or a broker throttle stands, never as a
// 1 ms loop for an idle connection.
import { expect } from 'chai';
import { createRequire } from 'node:module';
import '../../lib/kafka.ts';

type Queue = { pending: unknown[]; throttledUntil: number; throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null; checkPendingRequests(): void };
const require = createRequire(import.meta.url);
const { prototype } = require('kafkajs/src/network/requestQueue/index.js') as { prototype: { scheduleCheckPendingRequests(this: Queue): void } };

/** A queue's state, the delay its check was armed with (undefined: none), and the checks run. */
function armed(state: Pick<Queue, 'pending' | 'throttledUntil'>): { delay: number | undefined; queue: Queue } {
  const queue: Queue = { ...state, throttleCheckTimeoutId: null, checkPendingRequests: () => undefined };
  const real = globalThis.setTimeout;
  let delay: number | undefined;
  globalThis.setTimeout = ((fn: () => void, ms: number) => {
    delay = ms;
    return real(fn, 0);
  }) as typeof setTimeout;
  try {
    prototype.scheduleCheckPendingRequests.call(queue);
  } finally {
    globalThis.setTimeout = real;
  }
  if (queue.throttleCheckTimeoutId) clearTimeout(queue.throttleCheckTimeoutId);
  return { delay, queue };
}

describe('kafkajs request queue check', () => {
  it('is not re-armed for an idle connection (nothing waiting, no throttle)', () => {
    expect(armed({ pending: [], throttledUntil: -1 }).delay).to.equal(undefined);
    expect(armed({ pending: [], throttledUntil: Date.now() - 5 }).delay).to.equal(undefined);
  });

  it('is armed for requests waiting: at kafkajs\' interval, or when a throttle ends', () => {
    expect(armed({ pending: [{}], throttledUntil: -1 }).delay).to.equal(10);
    expect(armed({ pending: [{}], throttledUntil: Date.now() + 500 }).delay).to.be.within(400, 500);
    // A throttle still standing is waited out even with nothing queued yet, as kafkajs did.
    expect(armed({ pending: [], throttledUntil: Date.now() + 500 }).delay).to.be.within(400, 500);
  });
});
