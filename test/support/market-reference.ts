// The addendum's metric definitions written plainly, to check the service against: no
// code shared with processors/ or api/.
export type Lvl = [number, number];
export interface Snap {
  ts: number;
  bids: Lvl[];
  asks: Lvl[];
}
export interface Trade {
  ts: number;
  price: number;
  amount: number;
}

export const L = [0, 0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 300, 500];

interface MinuteRef {
  mids: number[];
  spreads: number[];
  bid: number[][];
  ask: number[][];
  nbid: number[][];
  nask: number[][];
  ticks: number[];
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

export function minutesOf(snaps: Snap[]): Map<number, MinuteRef> {
  const out = new Map<number, MinuteRef>();
  for (const s of snaps) {
    const bids = s.bids.filter((l) => l[1] > 0);
    const asks = s.asks.filter((l) => l[1] > 0);
    const bb = Math.max(...bids.map((l) => l[0]));
    const ba = Math.min(...asks.map((l) => l[0]));
    const mid = (bb + ba) / 2;
    const m = Math.floor(s.ts / 60_000) * 60_000;
    const e = out.get(m) ?? { mids: [], spreads: [], bid: [], ask: [], nbid: [], nask: [], ticks: [] };
    e.mids.push(mid);
    e.spreads.push(((ba - bb) / mid) * 1e4);
    const inBid = (l: number) => bids.filter(([p]) => p >= mid * (1 - l / 1e4));
    const inAsk = (l: number) => asks.filter(([p]) => p <= mid * (1 + l / 1e4));
    e.bid.push(L.map((l) => inBid(l).reduce((x, [p, a]) => x + p * a, 0)));
    e.ask.push(L.map((l) => inAsk(l).reduce((x, [p, a]) => x + p * a, 0)));
    e.nbid.push(L.map((l) => inBid(l).length));
    e.nask.push(L.map((l) => inAsk(l).length));
    for (const side of [bids.map((l) => l[0]).sort((a, b) => a - b), asks.map((l) => l[0]).sort((a, b) => a - b)]) {
      for (let i = 1; i < side.length; i++) if (side[i]! - side[i - 1]! > 0) e.ticks.push(side[i]! - side[i - 1]!);
    }
    out.set(m, e);
  }
  return out;
}

export interface WindowRef {
  minutes: number;
  samples: number;
  twap: number;
  first_mid: number;
  last_mid: number;
  bid: number[];
  ask: number[];
  nbid: number[];
  nask: number[];
  spreadUp: number[];
  /** depthUp(A)[levelIndex] */
  depthUp: (amount: number) => number[];
  tick: number;
}

export function windowOf(minutes: Map<number, MinuteRef>, from: number, to: number): WindowRef | undefined {
  const ms = [...minutes.entries()].filter(([m]) => m >= from && m < to).sort((a, b) => a[0] - b[0]);
  if (ms.length === 0) return undefined;
  const per = ms.map(([, e]) => e);
  const meanOf = (pick: (e: MinuteRef) => number[][]) => L.map((_, i) => mean(per.map((e) => mean(pick(e).map((v) => v[i]!)))));
  return {
    minutes: per.length,
    samples: per.reduce((n, e) => n + e.mids.length, 0),
    twap: mean(per.map((e) => mean(e.mids))),
    // price_change: from the first minute's mid to the last's (addendum 4: window figures are of minute values).
    first_mid: mean(per[0]!.mids),
    last_mid: mean(per[per.length - 1]!.mids),
    bid: meanOf((e) => e.bid),
    ask: meanOf((e) => e.ask),
    nbid: meanOf((e) => e.nbid),
    nask: meanOf((e) => e.nask),
    spreadUp: L.map((l) => (100 * per.filter((e) => Math.max(...e.spreads) <= l).length) / per.length),
    depthUp: (a) => L.map((_, i) => (100 * per.filter((e) => e.bid.every((b, k) => b[i]! > a && e.ask[k]![i]! > a)).length) / per.length),
    tick: per.reduce((m, e) => e.ticks.reduce((x, t) => Math.min(x, t), m), Infinity),
  };
}

export function tradesOf(trades: Trade[], from: number, to: number) {
  const inside = trades.filter((t) => t.ts >= from && t.ts < to);
  const notional = inside.reduce((s, t) => s + t.price * t.amount, 0);
  const amount = inside.reduce((s, t) => s + t.amount, 0);
  return { volume: notional, vwap: amount > 0 ? notional / amount : null };
}

/** Deterministic books and trades around a random-walk mid. */
export function generate(from: number, to: number, stepMs: number, seed = 7) {
  let a = seed;
  const rnd = () => {
    a = (a * 1103515245 + 12345) & 0x7fffffff;
    return a / 0x7fffffff;
  };
  const snaps: Snap[] = [];
  const trades: Trade[] = [];
  let mid = 100;
  for (let t = from; t < to; t += stepMs) {
    mid *= Math.exp((rnd() - 0.5) * 0.002);
    const half = mid * (0.5 + rnd() * 6) * 1e-4;
    const bids: Lvl[] = [];
    const asks: Lvl[] = [];
    for (let i = 0; i < 15; i++) {
      const off = half + i * mid * (1 + rnd() * 20) * 1e-4;
      bids.push([Number((mid - off).toFixed(4)), Number((50 + rnd() * 2000).toFixed(3))]);
      asks.push([Number((mid + off).toFixed(4)), Number((50 + rnd() * 2000).toFixed(3))]);
    }
    snaps.push({ ts: t + Math.floor(rnd() * 1000), bids, asks });
    if (rnd() < 0.7) trades.push({ ts: t + 500, price: Number(mid.toFixed(4)), amount: Number((1 + rnd() * 30).toFixed(3)) });
  }
  return { snaps, trades };
}
