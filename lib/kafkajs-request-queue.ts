// kafkajs 2.2.4 (its last release) re-arms a timer of each connection's request queue
// after every check, due at `throttledUntil - now`: without a broker throttle that is
// negative, which Node runs after 1 ms, so every connection wakes the event loop about a
// thousand times a second for as long as it is open, and Node 24 warns of the negative
// delay (kafkajs issues 1704 and 1751). Here the check is re-armed only while requests
// wait or a throttle stands, as the open fix proposes: a request that cannot be sent at
// once arms it (push), and each answer checks the queue again (fulfillRequest).
import { createRequire } from 'node:module';

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs' own interval for a queue with requests waiting and no throttle (src/network/requestQueue). */
const CHECK_PENDING_REQUESTS_INTERVAL = 10;

let patched = false;

/** Replaces the re-arming once per process (each worker thread loads its own kafkajs). */
export function patchRequestQueue(): void {
  if (patched) return;
  patched = true;
  const require = createRequire(import.meta.url);
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInternals };
  const original = RequestQueue.prototype.scheduleCheckPendingRequests;
  // Another kafkajs than the one this was written for is left as it is.
  if (typeof original !== 'function' || !/this\.throttledUntil - Date\.now\(\)/.test(original.toString())) return;
  RequestQueue.prototype.scheduleCheckPendingRequests = function (this: RequestQueueInternals) {
    if (this.throttleCheckTimeoutId) return;
    let scheduleAt = this.throttledUntil - Date.now();
    if (this.pending.length > 0) scheduleAt = scheduleAt > 0 ? scheduleAt : CHECK_PENDING_REQUESTS_INTERVAL;
    else if (scheduleAt <= 0) return;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, scheduleAt);
  };
}
