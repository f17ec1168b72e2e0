// A market maker's values (domain/market-makers/values.ts): trusted values per wallet and
// together, trusted over reported, reported buckets, coverage, and the overstatement rule
// the reconciliation and the RFQ track record share.
import { expect } from 'chai';
import {
  coarsestReported,
  addPackedWallet,
  compareBuckets,
  oneBucketComparedPacked,
  coverage,
  coveragePacked,
  DEFAULT_TOLERANCE_PCT,
  differencePct,
  differencePctPacked,
  overstated,
  overstatedPacked,
  reportedValues,
  shownValues,
  sumWallets,
  trustedVolume,
  packedWallet,
  packValues,
  unpackValues,
  walletValues,
  walletValuesOf,
  type TrustedDepthColumns,
  type TrustedVolumeColumns,
} from '../../domain/market-makers/values.ts';

describe('market-maker values (domain/market-makers/values.ts)', () => {
  it("a wallet's volume: 0 without fills, the fills' USD sum, null when no fill had a USD rate", () => {
    expect(trustedVolume(undefined)).to.equal(0);
    expect(trustedVolume({ fills: 0, volume_usd: 0, usd_fills: 0 })).to.equal(0);
    expect(trustedVolume({ fills: 3, volume_usd: 90, usd_fills: 2 })).to.equal(90);
    expect(trustedVolume({ fills: 3, volume_usd: 0, usd_fills: 0 })).to.equal(null);
  });

  it("a wallet's depth: the mean over its minutes with orders; a wallet of fills only has none", () => {
    const key = { exchange: 'x', pair: 'A/USDT', b: 60 };
    const found = walletValuesOf(
      [
        { ...key, wallet_id: 1, minutes: 4, bid_depth_sum: [400, 800], ask_depth_sum: [40, 80] },
        { ...key, wallet_id: 3, minutes: 0, bid_depth_sum: [0, 0], ask_depth_sum: [0, 0] },
      ],
      [
        { ...key, wallet_id: 1, fills: 2, volume_usd: 30, usd_fills: 2 },
        { ...key, wallet_id: 2, fills: 1, volume_usd: 5, usd_fills: 1 },
      ],
      [1],
    );
    expect(found).to.deep.equal([
      { ...key, wallet_id: 1, values: { volume: 30, bid: [200], ask: [20] } },
      { ...key, wallet_id: 3, values: { volume: 0, bid: [null], ask: [null] } },
      { ...key, wallet_id: 2, values: { volume: 5, bid: [null], ask: [null] } },
    ]);
  });

  /** Rows of one wallet, pair and bucket, by column. */
  const keyColumns = (n: number) => ({
    length: n,
    exchange: Array.from({ length: n }, () => 'x'),
    pair: Array.from({ length: n }, () => 'A/USDT'),
    wallet_id: new Float64Array(n).fill(1),
    b: new Float64Array(n).fill(60),
  });

  /** Depth rows as metrics.trusted reads them, by column. */
  const depthColumns = (rows: { minutes: number; bid_depth_sum: number[]; ask_depth_sum: number[] }[]): TrustedDepthColumns => {
    const side = (f: (r: (typeof rows)[number]) => number[]) => ({
      offsets: Uint32Array.from([0, ...rows.map((_, i) => rows.slice(0, i + 1).reduce((n, r) => n + f(r).length, 0))]),
      values: Float64Array.from(rows.flatMap(f)),
    });
    return {
      ...keyColumns(rows.length),
      minutes: Float64Array.from(rows, (r) => r.minutes),
      bid: side((r) => r.bid_depth_sum),
      ask: side((r) => r.ask_depth_sum),
    };
  };

  /** Volume rows as metrics.trusted reads them, by column. */
  const volumeColumns = (rows: { fills: number; volume_usd: number; usd_fills: number }[]): TrustedVolumeColumns => ({
    ...keyColumns(rows.length),
    fills: Float64Array.from(rows, (r) => r.fills),
    volume_usd: Float64Array.from(rows, (r) => r.volume_usd),
    usd_fills: Float64Array.from(rows, (r) => r.usd_fills),
  });

  it('packed as rows are found (packedWallet), the same values as walletValues; NaN for null', () => {
    const depth = { minutes: 4, bid_depth_sum: [400, 800], ask_depth_sum: [40, 80] };
    const volume = { fills: 3, volume_usd: 0, usd_fills: 0 };
    const cases: [typeof depth | undefined, typeof volume | undefined][] = [
      [depth, volume],
      [depth, undefined],
      [undefined, volume],
      [undefined, { fills: 2, volume_usd: 30, usd_fills: 2 }],
      [{ minutes: 0, bid_depth_sum: [0, 0], ask_depth_sum: [0, 0] }, undefined],
    ];
    for (const [d, v] of cases) {
      // A row inside a larger array, as the readings hold them.
      const out = new Float64Array(7).fill(-1);
      packedWallet.empty(2, out, 1);
      if (d) packedWallet.depth(depthColumns([d]), 0, 2, out, 1);
      if (v) packedWallet.volume(volumeColumns([v]), 0, out, 1);
      expect(unpackValues(out.subarray(1, 6), 2)).to.deep.equal(walletValues(d, v, [0, 1]));
      expect([out[0], out[6]]).to.deep.equal([-1, -1]);
    }
    const values = { volume: null, bid: [1, null], ask: [null, 2] };
    expect(unpackValues(packValues(values), 2)).to.deep.equal(values);
  });

  it("a market maker's wallets together: sums, null only where every wallet's is", () => {
    expect(
      sumWallets([
        { volume: 10, bid: [1, null], ask: [null, null] },
        { volume: null, bid: [2, 3], ask: [null, null] },
      ]),
    ).to.deep.equal({ volume: 10, bid: [3, 3], ask: [null, null] });
  });

  it('packed, the same sums: volume and depths in one array, NaN where unknown', () => {
    const wallets = [
      { volume: 10, bid: [1, null], ask: [null, 0.1] },
      { volume: null, bid: [2, 3], ask: [null, 0.2] },
      { volume: 5, bid: [null, 4], ask: [null, null] },
    ];
    const pack = (v: (typeof wallets)[number]) => Float64Array.from([v.volume, ...v.bid, ...v.ask], (x) => x ?? NaN);
    // Rows of a larger array, at offsets, as the reconciliation holds them.
    const width = 5;
    const sum = new Float64Array(3 * width).fill(-1);
    sum.set(pack(wallets[0]!), width);
    for (const w of wallets.slice(1)) addPackedWallet(sum, width, Float64Array.from([7, 7, ...pack(w)]), 2, width);
    const want = sumWallets(wallets);
    expect([...sum.subarray(width, 2 * width)].map((x) => (Number.isNaN(x) ? null : x))).to.deep.equal([want.volume, ...want.bid, ...want.ask]);
    expect([...sum.subarray(0, width), ...sum.subarray(2 * width)].every((x) => x === -1), 'the rows around untouched').to.equal(true);
  });

  it('shows trusted values, one row per wallet, instead of reported ones', () => {
    const reported = { volume: 99, bid: [], ask: [] };
    const trusted = [{ wallet: 7, values: { volume: 1, bid: [], ask: [] } }];
    expect(shownValues(trusted, reported)).to.deep.equal([{ wallet: 7, values: trusted[0]!.values }]);
    expect(shownValues([], reported)).to.deep.equal([{ wallet: undefined, values: reported }]);
    expect(shownValues([], undefined)).to.deep.equal([]);
  });

  it("a bucket's reported values: volume the sum, depth the mean", () => {
    const r = { sums: new Map([['volume/volume', 30], ['depth/bid_2bps', 300]]), counts: new Map([['volume/volume', 3], ['depth/bid_2bps', 2]]) };
    expect(reportedValues(r, ['2'])).to.deep.equal({ volume: 30, bid: [150], ask: [null] });
  });

  it("over one bucket (`a`), each market maker's coarsest reported interval on the pair", () => {
    const row = (organization: string, interval: '1d' | '1h' | '5m') => ({ organization, exchange: 'x', pair: 'A/USDT', interval });
    const rows = [row('m1', '5m'), row('m1', '1h'), row('m1', '1h'), row('m2', '5m')];
    expect(coarsestReported(rows)).to.deep.equal([row('m1', '1h'), row('m1', '1h'), row('m2', '5m')]);
  });

  it('coverage: 100 x own / whole, at most 100, null without a market', () => {
    expect(coverage(25, 100)).to.equal(25);
    expect(coverage(300, 100)).to.equal(100);
    expect(coverage(25, 0)).to.equal(null);
    expect(coverage(null, 100)).to.equal(null);
    expect(coverage(25, undefined)).to.equal(null);
    expect(coveragePacked(25, 100)).to.equal(25);
    expect(coveragePacked(null, 100)).to.be.NaN;
    expect(coveragePacked(25, 0)).to.be.NaN;
  });

  it('a report is overstated above the measurement by more than the tolerance; rounding is not', () => {
    expect(DEFAULT_TOLERANCE_PCT).to.equal(10);
    expect(overstated(110, 100)).to.equal(false);
    expect(overstated(110.01, 100)).to.equal(true);
    expect(overstated(130, 100, 50)).to.equal(false);
    // Any report above a measured 0.
    expect(overstated(1, 0)).to.equal(true);
    expect(overstated(0, 0)).to.equal(false);
    // The two sides summed in other orders.
    expect(overstated(0.1 + 0.2, 0.3, 0)).to.equal(false);
    expect(overstated(null, 100)).to.equal(false);
    expect(differencePct(120, 100)).to.equal(20);
    expect(differencePct(1, 0)).to.equal(null);
    // Packed, as the reconciliation's JSON writes them: NaN for unknown.
    expect(differencePctPacked(120, 100)).to.equal(20);
    expect(differencePctPacked(1, 0)).to.be.NaN;
    expect(differencePctPacked(NaN, 100)).to.be.NaN;
    expect(overstatedPacked(110.01, 100, 10)).to.equal(true);
    expect(overstatedPacked(NaN, 100, 10)).to.equal(false);
    expect(overstatedPacked(1, NaN, 10)).to.equal(false);
  });

  it('compares several reported buckets over those both sides have, else each side alone and unmatched', () => {
    expect(compareBuckets([{ reported: 10, trusted: 8 }, { reported: 30, trusted: null }, { reported: 20, trusted: 12 }], 'sum')).to.deep.equal({ reported: 30, trusted: 20, matched: true });
    expect(compareBuckets([{ reported: 10, trusted: 8 }, { reported: 20, trusted: 12 }], 'mean')).to.deep.equal({ reported: 15, trusted: 10, matched: true });
    expect(compareBuckets([{ reported: 10, trusted: null }, { reported: null, trusted: 4 }], 'sum')).to.deep.equal({ reported: 10, trusted: 4, matched: false });
    expect(compareBuckets([], 'mean')).to.deep.equal({ reported: null, trusted: null, matched: false });
  });

  it('compares one bucket packed as compareBuckets compares it, metric by metric', () => {
    const sides = [{ reported: 10.5, trusted: 8.25 }, { reported: 3, trusted: null }, { reported: null, trusted: 4 }, { reported: null, trusted: null }, { reported: -0, trusted: 0 }];
    const pack = (xs: (number | null)[]) => Float64Array.from(xs, (x) => x ?? NaN);
    const out = { reported: new Float64Array(2 + sides.length), trusted: new Float64Array(2 + sides.length), matched: new Uint8Array(2 + sides.length) };
    // The trusted side a row of a larger array, from offset 3.
    oneBucketComparedPacked(pack(sides.map((x) => x.reported)), pack([1, 2, 3, ...sides.map((x) => x.trusted)]), 3, out, 2);
    sides.forEach((x, j) => {
      const want = compareBuckets([x], j === 0 ? 'sum' : 'mean');
      const got = { reported: Number.isNaN(out.reported[2 + j]!) ? null : out.reported[2 + j]!, trusted: Number.isNaN(out.trusted[2 + j]!) ? null : out.trusted[2 + j]!, matched: out.matched[2 + j] === 1 };
      expect(got, JSON.stringify(x)).to.deep.equal(want);
      expect(Object.is(got.reported, want.reported)).to.equal(true);
    });
  });

  it('compares one reported bucket as it compares several', () => {
    const twice = (x: { reported: number | null; trusted: number | null }) => [x, { reported: null, trusted: null }];
    for (const x of [{ reported: 10.5, trusted: 8.25 }, { reported: 3, trusted: null }, { reported: null, trusted: 4 }, { reported: null, trusted: null }, { reported: -0, trusted: 0 }]) {
      for (const combine of ['sum', 'mean'] as const) {
        // A second bucket with nothing on either side changes no sum and, where both sides are, no mean.
        const several = compareBuckets(twice(x), combine);
        const one = compareBuckets([x], combine);
        if (combine === 'sum' || one.matched) expect(one, `${JSON.stringify(x)} ${combine}`).to.deep.equal(several);
        expect(Object.is(one.reported, x.reported === null ? null : 0 + x.reported / 1)).to.equal(true);
      }
    }
  });
});
