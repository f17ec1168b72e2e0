// Turns lines of a recording into md.orderbook messages. Two line shapes are understood:
// the addendum's `{exchange, pair, ts, bids, asks}` and recorder lines `{t, b, a}` (epoch
// ms, bids, asks) which need --exchange and --pair. A line that is neither is sent as it
// is: deciding what is bad is the processor's job, and it dead-letters it with a reason.

export interface LineOptions {
  exchange?: string;
  pair?: string;
}

export interface ProducedMessage {
  key: string | null;
  value: string;
}

export function lineToMessage(line: string, opts: LineOptions): ProducedMessage {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return { key: defaultKey(opts), value: line };
  }
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    const o = data as Record<string, unknown>;
    if ('t' in o && 'b' in o && 'a' in o && !('bids' in o)) {
      const exchange = opts.exchange;
      const pair = opts.pair;
      if (!exchange || !pair) throw new Error('recorder lines {t, b, a} need --exchange and --pair');
      return { key: `${exchange}:${pair}`, value: JSON.stringify({ exchange, pair, ts: o.t, bids: o.b, asks: o.a }) };
    }
    const exchange = typeof o.exchange === 'string' ? o.exchange : opts.exchange;
    const pair = typeof o.pair === 'string' ? o.pair : opts.pair;
    const value = { ...o, ...(exchange ? { exchange } : {}), ...(pair ? { pair } : {}) };
    return { key: exchange && pair ? `${exchange}:${pair}` : null, value: JSON.stringify(value) };
  }
  return { key: defaultKey(opts), value: line };
}

const defaultKey = (opts: LineOptions) => (opts.exchange && opts.pair ? `${opts.exchange}:${opts.pair}` : null);
