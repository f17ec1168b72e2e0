// A stream event's frame (api/stream/events.ts): encoded once, handed to each subscriber as
// shared pieces, and the bytes a subscriber gets are the frame it asked for.
import { expect } from 'chai';
import { appendFrame, encodeEvent, frame, type HubEvent, type MinuteEvent } from '../../api/stream/events.ts';
import { LEVELS_BPS } from '../../domain/market/facts.ts';

const base = { seq: 0, tp: 0, offset: 0, position: [1], at: 0, key: 'k', asset: 'ACME' };
const minute = (source: 'book' | 'trades'): MinuteEvent => ({
  ...base,
  type: 'minute',
  exchange: 'ex',
  pair: 'ACME/USDT',
  pairKey: 'ex\u0000ACME/USDT',
  message: {
    source,
    exchange: 'ex',
    pair: 'ACME/USDT',
    minute: Date.UTC(2026, 5, 25, 10, 0),
    written_at: Date.UTC(2026, 5, 25, 10, 2, 0, 250),
    ...(source === 'book'
      ? { mid: 1.5, spread_bps: 2.25, bid_depth: LEVELS_BPS.map((_, i) => i * 100), ask_depth: LEVELS_BPS.map((_, i) => (i === 11 ? NaN : i * 10)) }
      : { volume: 1234.5, vwap: 1.49, trades: 7 }),
  },
});

/** The frame a subscriber is written, as text. */
function written(e: HubEvent, levels: readonly number[], id?: string): { text: string; out: Buffer[] } {
  const out: Buffer[] = [];
  const n = appendFrame(out, e, (e.encoded ??= encodeEvent(e, 'own-id')), levels, id);
  const text = Buffer.concat(out).toString('utf8');
  expect(Buffer.byteLength(text)).to.equal(n);
  return { text, out };
}

const dataOf = (text: string) => JSON.parse(/\ndata: (.*)\n\n$/.exec(text)![1]!) as Record<string, unknown>;

describe('stream event frames', () => {
  it("a book minute: the fields everyone gets, the depth at the subscriber's levels in its order, then written_at", () => {
    const { text } = written(minute('book'), [0.5, 10, 100]);
    expect(text.startsWith('event: minute\nid: own-id\ndata: {')).to.equal(true);
    const d = dataOf(text);
    expect(Object.keys(d)).to.deep.equal(['exchange', 'pair', 'asset', 'timestamp', 'source', 'mid', 'spread_bps', 'bid_0.5bps', 'bid_10bps', 'bid_100bps', 'ask_0.5bps', 'ask_10bps', 'ask_100bps', 'written_at']);
    expect(d).to.include({ exchange: 'ex', pair: 'ACME/USDT', asset: 'ACME', timestamp: '2026-06-25T10:00:00.000Z', source: 'book', mid: 1.5, spread_bps: 2.25, 'bid_10bps': 1100, 'ask_10bps': null, 'ask_100bps': 200, written_at: '2026-06-25T10:02:00.250Z' });
  });

  it('subscribers asking other levels share the encoded pieces: only their own levels differ', () => {
    const e = minute('book');
    const a = written(e, [1, 10]);
    const b = written(e, [10, 50]);
    expect(a.out[0]).to.equal(b.out[0]);
    expect(a.out[1]).to.equal(b.out[1]);
    // bid_10bps: the second of a's bid levels, the first of b's.
    expect(a.out[3]).to.equal(b.out[2]);
    expect(a.out.at(-1)).to.equal(b.out.at(-1));
    expect(Object.keys(dataOf(b.text))).to.include.members(['bid_10bps', 'bid_50bps', 'ask_10bps', 'ask_50bps']);
  });

  it("a trades minute is the same text whatever the levels; a subscriber's own id replaces the event's", () => {
    const e = minute('trades');
    const one = written(e, [10]).text;
    expect(written(e, [0, 5, 500]).text).to.equal(one);
    expect(dataOf(one)).to.deep.equal({ exchange: 'ex', pair: 'ACME/USDT', asset: 'ACME', timestamp: '2026-06-25T10:00:00.000Z', source: 'trades', volume: 1234.5, vwap: 1.49, trades: 7, written_at: '2026-06-25T10:02:00.250Z' });
    expect(written(e, [10], 'its-id').text).to.equal(one.replace('id: own-id', 'id: its-id'));
  });

  it('other events: the frame of their data, byte for byte', () => {
    const e: HubEvent = { ...base, type: 'loan', parties: { organization: 'o', market_maker: 'm' }, data: '{"id":1,"note":"é"}' };
    expect(written(e, [10]).text).to.equal(frame('loan', 'own-id', e.data));
  });
});
