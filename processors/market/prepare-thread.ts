// The helper thread of processors/market/prepare.ts: for each batch of values, the steps
// up to compute of the processor's own spec, with a rate table of its own whose
// observations go back with the batch. A pair quoted in another currency than USD is left to
// the consumer's thread, where it can wait for its rate.
import { parentPort, workerData } from 'node:worker_threads';
import { isUsdQuoted } from '../../domain/market/prices.ts';
import { frameOf } from '../../lib/schema-registry.ts';
import { parseTimestamp } from '../../schemas/timestamps.ts';
import { orderBookSpec } from '../orderbook/processor.ts';
import { KnownPairs } from '../reference-cache.ts';
import { ObservedRates, PREPARED, type PrepareInit, type PrepareReply, type PrepareRequest, type PreparedBatch } from './prepare.ts';
import type { MarketMessage } from './windowed-pipeline.ts';

const SPECS = { 'md.orderbook': orderBookSpec } as const;

const init = workerData as PrepareInit;
const port = parentPort!;
/** Observes only the known pairs' mids: an unknown pair's message is dead-lettered before compute. */
class KnownRates extends ObservedRates {
  known = new Set<string>();

  override observe(pair: string, mid: number, ts: number, exchange = ''): boolean {
    return this.known.has(KnownPairs.key(exchange, pair)) && super.observe(pair, mid, ts, exchange);
  }
}
const rates = new KnownRates();
const make = SPECS[init.topic as keyof typeof SPECS];
if (!make) throw new Error(`no spec to prepare ${init.topic} with`);
const spec = make(rates);
const packing = spec.packing!;

function prepare(bytes: Buffer, ends: Uint32Array): PreparedBatch {
  const n = ends.length;
  const batch: PreparedBatch = {
    kinds: new Uint8Array(n).fill(PREPARED.here),
    outcomes: [],
    exchanges: new Array<string>(n).fill(''),
    pairs: new Array<string>(n).fill(''),
    ts: new Float64Array(n),
    values: new Float64Array(n * packing.width),
    mids: [],
  };
  let start = 0;
  for (let i = 0; i < n; i++) {
    let value = bytes.subarray(start, ends[i]);
    start = ends[i]!;
    if (value.length === 0) continue;
    if (value[0] === 0) {
      const frame = frameOf(value);
      if (!frame || frame.schemaId !== init.ownSchemaId) continue;
      value = frame.payload;
    }
    let data: unknown;
    try {
      data = JSON.parse(value.toString('utf8'));
    } catch {
      continue;
    }
    if (!spec.validate(data)) continue;
    const msg = data as MarketMessage;
    const ts = parseTimestamp(msg.ts);
    if (ts === undefined) continue;
    // A pair quoted in another currency waits for its rate on the consumer's thread (WindowedPipeline).
    if (!isUsdQuoted(msg.pair)) continue;
    const computed = spec.compute(data, ts);
    batch.exchanges[i] = msg.exchange;
    batch.pairs[i] = msg.pair;
    batch.ts[i] = ts;
    if (computed.kind === 'ok') {
      packing.write(computed.value, batch.values, i * packing.width);
      batch.kinds[i] = PREPARED.computed;
    } else {
      batch.outcomes.push([i, computed]);
      batch.kinds[i] = PREPARED.notComputed;
    }
  }
  batch.mids = rates.take();
  return batch;
}

port.on('message', (req: PrepareRequest) => {
  try {
    if (req.known) {
      rates.known = new Set(req.known);
      rates.learnPairs(req.known);
    }
    const batch = prepare(Buffer.from(req.bytes), req.ends);
    port.postMessage({ id: req.id, batch } satisfies PrepareReply, [batch.kinds.buffer, batch.ts.buffer, batch.values.buffer] as ArrayBuffer[]);
  } catch (e) {
    port.postMessage({ id: req.id, error: (e as Error).message } satisfies PrepareReply);
  }
});
port.postMessage({ ready: true } satisfies PrepareReply);
