// A market maker's measured track record for the RFQ comparison (addendum section 8;
// docs/rfq.md, "Track record"): over the last 30 days, on the pairs of the assets it
// already serves (its coverage) on exchanges where it has a wallet (elsewhere nothing of it
// is measured), what its own orders and fills showed (trusted metrics,
// schemas/clickhouse/021_trusted_metrics.sql) and how far its reports (mm_reported) were
// from that.
//
// What can and cannot be measured from what is stored:
// * depth: trusted depth per wallet and minute, against the public mid of that minute. A
//   pair's depth is each wallet's mean over its minutes, the wallets added (as the trusted
//   depth endpoint answers `interval=a`); the record's depth is the mean over the pairs.
// * spread and the uptimes of part 4: NOT measurable. mm_order_minutes keeps a minute's
//   price levels with their amounts summed over the minute's snapshots, not each snapshot's
//   best bid and ask, and the addendum defines spread and uptime per snapshot (a minute is
//   up when every snapshot was). The best prices of the summed levels would understate the
//   spread (the best bid of one snapshot against the best ask of another), so null with
//   the reason, rather than a guess.
// * presence: what can be said instead of an uptime: the share of the public book's
//   minutes in which the market maker had priced orders on the pair (any snapshot).
// * reported-vs-trusted gap: the reconciliation's comparison (domain/market-makers/reconciliation.ts)
//   per pair and UTC day, over the metrics where both sides cover the same reported buckets.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse, Params } from '../../lib/clickhouse.ts';
import { levelIndex, levelName } from '../market/facts.ts';
import { tile, type Piece } from '../market/window.ts';
import type { Pair, Wallet } from '../reference/repository.ts';
import { reconcile, reconciledMetrics } from '../market-makers/reconciliation.ts';
import { MarketMakerReadings } from '../market-makers/readings.ts';
import { marketWindow } from '../market/window.ts';
import { DEFAULT_TOLERANCE_PCT, differencePct, overstated as overstates, trustedVolume } from '../market-makers/values.ts';
import { DAY_MS } from '../../lib/time.ts';

export const TRACK_RECORD_DAYS = 30;
/** Depth levels always shown; the RFQ's depth requirements add theirs. */
export const TRACK_RECORD_LEVELS = [2, 10, 50] as const;
/** A day's report counts as overstated by the reconciliation's rule at its default tolerance. */
export const GAP_TOLERANCE_PCT = DEFAULT_TOLERANCE_PCT;

export const NOT_MEASURED = {
  spread:
    "Not measurable: the market maker's orders are stored per minute as price levels summed over the minute's snapshots, not as each snapshot's best bid and ask, so its own spread per snapshot cannot be recovered.",
  uptime:
    'Spread and depth uptime (addendum section 4) need every snapshot of a minute; only per-minute sums of the market maker’s orders are stored. presence_pct is shown instead.',
} as const;

export interface PairRecord {
  exchange: string;
  pair: string;
  asset: string;
  /** Minutes of the public book with data on the pair. */
  market_minutes: number;
  /** Minutes in which the market maker had priced orders on the pair. */
  quoted_minutes: number;
  presence_pct: number | null;
  volume_usd: number | null;
  depth: Record<string, number | null>;
}

export interface TrackRecord {
  from: string;
  to: string;
  days: number;
  assets: string[];
  pairs: PairRecord[];
  /** Mean over the pairs with orders of each pair's depth (its wallets added), USD. */
  depth: Record<string, number | null>;
  volume_usd: number | null;
  spread_bps: null;
  spread_reason: string;
  uptime: { presence_pct: number | null; spread_uptime_pct: null; depth_uptime_pct: null; reason: string };
  reported_gap: {
    days_compared: number;
    volume_reported: number | null;
    volume_trusted: number | null;
    volume_diff_pct: number | null;
    depth_diff_pct: Record<string, number | null>;
    /** Days on a pair whose reported volume or depth exceeded the measurement by more than the tolerance (the reconciliation's flag). */
    overstated_days: number;
    tolerance_pct: number;
  };
}

const key = (...parts: (string | number)[]) => parts.join('\u0000');

const piecesSql = (pieces: Piece[], params: Params, select: (p: Piece, time: string) => string): string =>
  pieces
    .map((p, i) => {
      params[`f${i}`] = Math.floor(p.from / 1000);
      params[`t${i}`] = Math.floor(p.to / 1000);
      const time = p.table === 'minutes' ? 'minute' : 'bucket';
      return select(p, time).replaceAll('{WINDOW}', `${time} >= toDateTime({f${i}:UInt32}, 'UTC') AND ${time} < toDateTime({t${i}:UInt32}, 'UTC')`);
    })
    .join(' UNION ALL ');

interface DepthRow {
  exchange: string;
  pair: string;
  wallet_id: string | number;
  day: string | number;
  minutes: string | number;
  bid: number[];
  ask: number[];
}

interface VolumeRow {
  exchange: string;
  pair: string;
  day: string | number;
  fills: string | number;
  volume: number;
  usd_fills: string | number;
}

/** `levels` must be levels of L. */
export async function trackRecord(
  ch: ClickHouse,
  input: { pairs: readonly Pair[]; wallets: readonly Wallet[]; organization: string; now: number; levels: readonly number[]; rolledUpTo: number; latenessMs: number },
): Promise<TrackRecord> {
  const to = Math.floor(input.now / 60_000) * 60_000;
  const from = to - TRACK_RECORD_DAYS * DAY_MS;
  const walletExchanges = new Set(input.wallets.map((w) => w.exchange));
  const pairs = input.pairs.filter((p) => walletExchanges.has(p.exchange));
  const levels = [...new Set(input.levels)].filter((l) => levelIndex(l) >= 0).sort((a, b) => a - b);
  const depthNames = levels.flatMap((l) => [`bid_${levelName(l)}bps`, `ask_${levelName(l)}bps`]);
  const empty = (): Record<string, number | null> => Object.fromEntries(depthNames.map((n) => [n, null]));
  const record: TrackRecord = {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    days: TRACK_RECORD_DAYS,
    assets: [...new Set(input.pairs.map((p) => p.asset))].sort(),
    pairs: [],
    depth: empty(),
    volume_usd: null,
    spread_bps: null,
    spread_reason: NOT_MEASURED.spread,
    uptime: { presence_pct: null, spread_uptime_pct: null, depth_uptime_pct: null, reason: NOT_MEASURED.uptime },
    reported_gap: { days_compared: 0, volume_reported: null, volume_trusted: null, volume_diff_pct: null, depth_diff_pct: empty(), overstated_days: 0, tolerance_pct: GAP_TOLERANCE_PCT },
  };
  if (pairs.length === 0 || input.wallets.length === 0) return record;

  const pieces = tile(from, to, input.rolledUpTo);
  // The trusted families have no rows of the open hour (schemas/clickhouse/008).
  if (pieces.some((p) => p.table === 'open')) throw new Error('a track record reads whole hours rolled up (RolledUp.through)');
  const base = (): Params => ({
    pairs: pairs.map((p) => new TupleParam([p.exchange, p.pair])),
    wallets: input.wallets.map((w) => w.id),
  });
  const pairWhere = '(exchange, pair) IN {pairs:Array(Tuple(String, String))}';
  const walletWhere = 'wallet_id IN {wallets:Array(UInt64)}';

  const depthParams = base();
  const depthSql = piecesSql(pieces, depthParams, (p, time) =>
    p.table === 'minutes'
      ? `SELECT exchange, pair, wallet_id, toUnixTimestamp(toStartOfDay(${time})) AS day, count() AS minutes, sumForEach(bid_depth) AS bid, sumForEach(ask_depth) AS ask
         FROM trusted_depth_minutes FINAL WHERE ${pairWhere} AND ${walletWhere} AND {WINDOW} GROUP BY exchange, pair, wallet_id, day`
      : `SELECT exchange, pair, wallet_id, toUnixTimestamp(toStartOfDay(${time})) AS day, sum(minutes) AS minutes, sumForEach(bid_depth_sum) AS bid, sumForEach(ask_depth_sum) AS ask
         FROM trusted_depth_${p.table} FINAL WHERE ${pairWhere} AND ${walletWhere} AND {WINDOW} GROUP BY exchange, pair, wallet_id, day`,
  );
  const volumeParams = base();
  const volumeSql = piecesSql(pieces, volumeParams, (p, time) =>
    `SELECT exchange, pair, toUnixTimestamp(toStartOfDay(${time})) AS day, sum(fills) AS fills, sum(volume_usd) AS volume, sum(usd_fills) AS usd_fills
     FROM trusted_volume_${p.table} FINAL WHERE ${pairWhere} AND ${walletWhere} AND {WINDOW} GROUP BY exchange, pair, day`,
  );
  const marketParams = base();
  const marketSql = piecesSql(pieces, marketParams, (p, time) =>
    p.table === 'minutes'
      ? `SELECT exchange, pair, count() AS minutes FROM book_minutes FINAL WHERE ${pairWhere} AND {WINDOW} GROUP BY exchange, pair`
      : `SELECT exchange, pair, sum(minutes) AS minutes FROM book_${p.table} FINAL WHERE ${pairWhere} AND {WINDOW} GROUP BY exchange, pair`,
  );
  // Distinct minutes across wallets: two wallets quoting the same minute count it once.
  const quotedParams: Params = { ...base(), from: from / 1000, to: to / 1000 };
  const quotedSql = `SELECT exchange, pair, uniqExact(minute) AS minutes FROM trusted_depth_minutes FINAL
    WHERE ${pairWhere} AND ${walletWhere} AND minute >= toDateTime({from:UInt32}, 'UTC') AND minute < toDateTime({to:UInt32}, 'UTC') GROUP BY exchange, pair`;
  // The reconciliation of these pairs at `1d` over the same days: what it compares is the gap.
  const window = { ...marketWindow('1d', { kind: 'range', from, to }, undefined, input.now, input.rolledUpTo), interval: '1d' as const };
  const reconciled = reconcile(
    new MarketMakerReadings(ch),
    { window, levels, makers: new Map([[input.organization, { pairs: [...pairs] }]]), pairs: [...pairs], wallets: new Map(input.wallets.map((w) => [w.id, w])) },
    input.latenessMs,
  );
  const [depthRows, volumeRows, marketRows, quotedRows, found] = await Promise.all([
    pieces.length ? ch.query<DepthRow>(depthSql, depthParams) : Promise.resolve([]),
    pieces.length ? ch.query<VolumeRow>(volumeSql, volumeParams) : Promise.resolve([]),
    pieces.length ? ch.query<{ exchange: string; pair: string; minutes: string | number }>(marketSql, marketParams) : Promise.resolve([]),
    ch.query<{ exchange: string; pair: string; minutes: string | number }>(quotedSql, quotedParams),
    reconciled,
  ]);

  const idx = levels.map((l) => levelIndex(l));
  // Per pair, wallet and day: minutes and depth sums at the chosen levels (pieces of one day added).
  const byWalletDay = new Map<string, { exchange: string; pair: string; wallet: number; day: number; minutes: number; bid: number[]; ask: number[] }>();
  for (const r of depthRows) {
    const day = Number(r.day) * 1000;
    const k = key(r.exchange, r.pair, Number(r.wallet_id), day);
    const x = byWalletDay.get(k) ?? { exchange: r.exchange, pair: r.pair, wallet: Number(r.wallet_id), day, minutes: 0, bid: idx.map(() => 0), ask: idx.map(() => 0) };
    x.minutes += Number(r.minutes);
    idx.forEach((j, i) => {
      x.bid[i]! += r.bid[j] ?? 0;
      x.ask[i]! += r.ask[j] ?? 0;
    });
    byWalletDay.set(k, x);
  }
  /** Depth of a set of wallet-day sums: each wallet's mean over its minutes, the wallets added. */
  const depthOf = (cells: { wallet: number; minutes: number; bid: number[]; ask: number[] }[]): number[] | null => {
    const perWallet = new Map<number, { minutes: number; bid: number[]; ask: number[] }>();
    for (const c of cells) {
      const w = perWallet.get(c.wallet) ?? { minutes: 0, bid: idx.map(() => 0), ask: idx.map(() => 0) };
      w.minutes += c.minutes;
      c.bid.forEach((v, i) => (w.bid[i]! += v));
      c.ask.forEach((v, i) => (w.ask[i]! += v));
      perWallet.set(c.wallet, w);
    }
    const out = [...idx.map(() => 0), ...idx.map(() => 0)];
    let any = false;
    for (const w of perWallet.values()) {
      if (w.minutes === 0) continue;
      any = true;
      idx.forEach((_, i) => {
        out[2 * i] = out[2 * i]! + w.bid[i]! / w.minutes;
        out[2 * i + 1] = out[2 * i + 1]! + w.ask[i]! / w.minutes;
      });
    }
    return any ? out : null;
  };
  const named = (values: number[] | null): Record<string, number | null> => Object.fromEntries(depthNames.map((n, i) => [n, values ? values[i]! : null]));

  const volumeByPairDay = new Map<string, number | null>();
  for (const r of volumeRows) {
    const k = key(r.exchange, r.pair, Number(r.day) * 1000);
    const v = trustedVolume({ fills: Number(r.fills), volume_usd: Number(r.volume), usd_fills: Number(r.usd_fills) });
    const prev = volumeByPairDay.get(k);
    volumeByPairDay.set(k, prev === undefined ? v : prev === null ? v : v === null ? prev : prev + v);
  }
  // One row per pair and piece of the window: added up.
  const market = new Map<string, number>();
  for (const r of marketRows) market.set(key(r.exchange, r.pair), (market.get(key(r.exchange, r.pair)) ?? 0) + Number(r.minutes));
  const quoted = new Map(quotedRows.map((r) => [key(r.exchange, r.pair), Number(r.minutes)]));

  const pairDepths: number[][] = [];
  let volumeTotal: number | null = null;
  let marketMinutes = 0;
  let quotedMinutes = 0;
  for (const p of pairs) {
    const cells = [...byWalletDay.values()].filter((c) => c.exchange === p.exchange && c.pair === p.pair);
    const d = depthOf(cells);
    if (d) pairDepths.push(d);
    let volume: number | null = null;
    for (const [k, v] of volumeByPairDay) if (k.startsWith(key(p.exchange, p.pair) + '\u0000') && v !== null) volume = (volume ?? 0) + v;
    if (volume !== null) volumeTotal = (volumeTotal ?? 0) + volume;
    const m = market.get(key(p.exchange, p.pair)) ?? 0;
    const q = quoted.get(key(p.exchange, p.pair)) ?? 0;
    marketMinutes += m;
    quotedMinutes += Math.min(q, m);
    record.pairs.push({
      exchange: p.exchange,
      pair: p.pair,
      asset: p.asset,
      market_minutes: m,
      quoted_minutes: q,
      presence_pct: m > 0 ? Math.min(100, (100 * q) / m) : null,
      volume_usd: volume,
      depth: named(d),
    });
  }
  if (pairDepths.length > 0) record.depth = named(depthNames.map((_, i) => pairDepths.reduce((s, d) => s + d[i]!, 0) / pairDepths.length));
  record.volume_usd = volumeTotal;
  record.uptime.presence_pct = marketMinutes > 0 ? (100 * quotedMinutes) / marketMinutes : null;

  // Per reconciled row (a pair's day) and metric whose sides cover the same buckets.
  const metrics = reconciledMetrics(levels);
  const depthAt = metrics.map((m) => depthNames.indexOf(m));
  let volR = 0;
  let volT = 0;
  let volN = 0;
  const depthR = depthNames.map(() => 0);
  const depthT = depthNames.map(() => 0);
  const depthN = depthNames.map(() => 0);
  let compared = 0;
  let overstated = 0;
  found.rows.forEach((_, row) => {
    let both = false;
    let flagged = false;
    for (let j = 0; j < found.width; j++) {
      const k = row * found.width + j;
      if (found.matched[k] !== 1) continue;
      const r = found.reported[k]!;
      const t = found.trusted[k]!;
      both = true;
      if (overstates(r, t, GAP_TOLERANCE_PCT)) flagged = true;
      if (j === 0) {
        volR += r;
        volT += t;
        volN++;
      } else {
        const i = depthAt[j]!;
        depthR[i]! += r;
        depthT[i]! += t;
        depthN[i]!++;
      }
    }
    if (both) compared++;
    if (flagged) overstated++;
  });
  const pct = (r: number, t: number, n: number) => (n === 0 ? null : differencePct(r, t));
  record.reported_gap = {
    days_compared: compared,
    volume_reported: volN > 0 ? volR : null,
    volume_trusted: volN > 0 ? volT : null,
    volume_diff_pct: pct(volR, volT, volN),
    depth_diff_pct: Object.fromEntries(depthNames.map((n, i) => [n, pct(depthR[i]!, depthT[i]!, depthN[i]!)])),
    overstated_days: overstated,
    tolerance_pct: GAP_TOLERANCE_PCT,
  };
  return record;
}
