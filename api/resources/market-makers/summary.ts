// GET /v2/organizations/market-maker-metrics/summary/ (specification 4.10): per market
// maker, exchange, pair and bucket, volume and depth with their coverage of the whole
// market. Trusted values replace reported ones (addendum section 4): a bucket with any
// wallet's trusted values has a row per wallet (`source: wallet`), else the reported row.
//
// The JSON answer is written as text per market maker, pair and bucket (the same text
// JSON.stringify gives of the rows), and the text of sealed buckets is kept between
// requests (sealed-rows.ts): only the buckets not kept are read and written anew.
import { presentOrganization } from '../../presenters.ts';
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { timeColumnNames, timestampOf } from '../../../domain/market/timestamps.ts';
import { bucketsOf, mergeRanges, planBuckets, sealedBefore, type Range } from '../../../domain/market/window.ts';
import type { Pair } from '../../../domain/reference/repository.ts';
import { writesIn } from '../../market-caches/sealing.ts';
import { validators } from '../market/schemas.ts';
import { INTERVALS } from '../../../domain/market/facts.ts';
import { parseMmRequest, type MmRequest } from './request.ts';
import type { MmHandler, MmServices } from './routes.ts';
import { coverage, shownValues, type Values } from '../../../domain/market-makers/values.ts';
import { depthNames, readValues, type Cell, type Want } from './values.ts';

const WANT: Want = { trustedDepth: true, trustedVolume: true, reported: 'untrusted', market: true };

export const summary: MmHandler = (s) => async (ctx, raw) => {
  const out = wantsCsv(ctx);
  const req = await parseMmRequest(s.deps, ctx, raw, { validate: validators.any, intervals: INTERVALS });
  const shape = shapeOf(req);
  if (!out.csv) {
    ctx.type = 'application/json';
    ctx.body = await summaryJson(s, req, shape);
    return;
  }
  const { cells, market } = await readValues(s, req, WANT);
  const rows: Record<string, unknown>[] = [];
  for (const c of cells) {
    const head: Record<string, unknown> = {
      organization: presentOrganization(req.makers.get(c.maker)!.organization),
      asset: c.pair.asset,
      exchange: c.pair.exchange,
      pair: c.pair.pair,
      ...timestampOf(req.window, c.b),
    };
    for (const values of rowsOf(c, market(c.pair, c.b), shape.levels)) {
      const r = { ...head };
      shape.valueColumns.forEach((name, i) => (r[name] = values[i]));
      rows.push(r);
    }
  }
  sendRows(ctx, rows, shape.columns, out);
};

interface Shape {
  levels: number;
  columns: string[];
  /** The columns after the time columns, in order. */
  valueColumns: string[];
}

function shapeOf(req: MmRequest): Shape {
  const { levels } = req;
  const valueColumns = [
    'is_trusted',
    'source',
    'wallet_id',
    'wallet_number',
    'volume',
    'volume_coverage',
    ...depthNames(levels, 'bid'),
    ...depthNames(levels, 'ask'),
    ...depthNames(levels, 'bid', '_coverage'),
    ...depthNames(levels, 'ask', '_coverage'),
  ];
  return {
    levels: levels.length,
    columns: ['organization', 'asset', 'exchange', 'pair', ...timeColumnNames(req.window), ...valueColumns],
    valueColumns,
  };
}

type Scalar = number | string | boolean | null;

/** The value columns of each row a cell shows: one per wallet with trusted values, else the reported one. */
function rowsOf(c: Cell, whole: Values | undefined, levels: number): Scalar[][] {
  const row = (values: Values, wallet: { id: number; number: number } | undefined): Scalar[] => {
    const r: Scalar[] = [wallet !== undefined, wallet ? 'wallet' : 'organization', wallet?.id ?? null, wallet?.number ?? null, values.volume, coverage(values.volume, whole?.volume)];
    for (let i = 0; i < levels; i++) r.push(values.bid[i]!);
    for (let i = 0; i < levels; i++) r.push(values.ask[i]!);
    for (let i = 0; i < levels; i++) r.push(coverage(values.bid[i]!, whole?.bid[i]));
    for (let i = 0; i < levels; i++) r.push(coverage(values.ask[i]!, whole?.ask[i]));
    return r;
  };
  return shownValues(c.trusted, c.reported).map((x) => row(x.values, x.wallet));
}

/** A value as JSON.stringify writes it (a number that is not finite as null). */
function scalarJson(v: Scalar): string {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

const [OPEN, COMMA, CLOSE, NONE] = ['[', ',', ']', ''].map((t) => Buffer.from(t)) as [Buffer, Buffer, Buffer, Buffer];

interface Bucket {
  /** Bucket start, epoch s (0 for `a`). */
  b: number;
  end: number;
  /** The window's parts in the bucket. */
  ranges: Range[];
  /** Whether the window holds the whole bucket (the first one may be cut by its start). */
  whole: boolean;
}

interface MakerPair {
  maker: string;
  pair: Pair;
  /** The cell's key in the cache: everything its text is made of besides the bucket's values. */
  key: string;
  /** `{"organization":...,"asset":...,"exchange":...,"pair":...`, the start of each row's text. */
  head: string;
}

/** The answer's JSON text, sealed buckets' text taken from the cache while their write counts stand. */
async function summaryJson(s: MmServices, req: MmRequest, shape: Shape): Promise<Buffer> {
  const w = req.window;
  const cache = s.sealed;
  const buckets: Bucket[] =
    w.interval === 'a'
      ? [{ b: 0, end: 0, ranges: w.ranges, whole: false }]
      : bucketsOf(w.interval, w.ranges, w.zone).map((bk) => ({
          b: Math.floor(bk.start / 1000),
          end: bk.end,
          ranges: bk.ranges,
          whole: bk.ranges.reduce((n, [a, z]) => n + z - a, 0) === bk.end - bk.start,
        }));
  const makerPairs = makerPairsOf(req);
  const cellKeys = makerPairs.map((mp) => mp.key);
  const sealed = sealedBefore({ latenessMs: s.deps.config.latenessMs, now: s.deps.now });
  // A bucket the window's start cuts is kept by its part in the window too: that part moves
  // with the window each minute, so such an entry serves the requests of a minute.
  const bucketKey = (bk: Bucket) => `${w.interval}|${w.zone}|${w.zoned}|${req.levels.join(',')}|${bk.b}|${bk.whole ? '' : bk.ranges.map((r) => r.join('-')).join(',')}`;
  const keepable = cache.enabled && w.interval !== 'a' ? buckets.filter((bk) => bk.end <= sealed) : [];
  const open = buckets.filter((bk) => !keepable.includes(bk));
  const tsText = new Map(buckets.map((bk) => [bk.b, w.interval === 'a' ? '' : `,"timestamp":${JSON.stringify(timestampOf(w, bk.b).timestamp)}`]));

  /** The rows' text of these buckets, by cell key and bucket. */
  const compute = async (bks: Bucket[]): Promise<Map<string, Map<number, Buffer>>> => {
    const texts = new Map<string, Map<number, Buffer>>();
    if (bks.length === 0) return texts;
    const ranges = mergeRanges(bks.flatMap((bk) => bk.ranges));
    const part: MmRequest = w.interval === 'a' ? req : { ...req, window: { ...w, ranges, plan: planBuckets(w.interval, ranges, w.zone, w.rolledUpTo) } };
    const { cells, market } = await readValues(s, part, WANT);
    const names = shape.valueColumns.map((name, i) => `${i === 0 ? '' : ','}${JSON.stringify(name)}:`);
    const byCell = new Map(makerPairs.map((mp) => [`${mp.maker}\u0000${mp.pair.exchange}\u0000${mp.pair.pair}`, mp]));
    for (const c of cells) {
      const mp = byCell.get(`${c.maker}\u0000${c.pair.exchange}\u0000${c.pair.pair}`);
      if (!mp) continue;
      const rows = rowsOf(c, market(c.pair, c.b), shape.levels);
      if (rows.length === 0) continue;
      const start = `${mp.head}${tsText.get(c.b) ?? `,"timestamp":${JSON.stringify(timestampOf(w, c.b).timestamp)}`},`;
      let text = '';
      for (const values of rows) {
        // The value columns written one by one, as JSON.stringify writes them: an object of
        // 111 keys built per row to stringify it cost more than the text itself.
        let r = start;
        for (let i = 0; i < values.length; i++) r += names[i]! + scalarJson(values[i]!);
        r += '}';
        text = text === '' ? r : `${text},${r}`;
      }
      let m = texts.get(mp.key);
      if (!m) texts.set(mp.key, (m = new Map()));
      m.set(c.b, Buffer.from(text));
    }
    return texts;
  };
  const keep = (bks: Bucket[], versions: Map<Bucket, number>, texts: Map<string, Map<number, Buffer>>) => {
    for (const bk of bks) cache.put(bucketKey(bk), versions.get(bk)!, cellKeys.map((k) => [k, texts.get(k)?.get(bk.b) ?? NONE]));
  };
  const versionsOf = async (bks: Bucket[]): Promise<Map<Bucket, number>> => {
    const writes = await s.metrics.summaryWrites(Math.min(...bks.map((bk) => bk.b * 1000)), Math.max(...bks.map((bk) => bk.end)));
    return new Map(bks.map((bk) => [bk, writesIn(writes, bk.b * 1000, bk.end)]));
  };

  const kept = new Map<Bucket, Map<string, Buffer>>();
  let fresh: Map<string, Map<number, Buffer>>[];
  if (keepable.length === 0) {
    fresh = [await compute(open)];
  } else if (keepable.every((bk) => cache.holds(bucketKey(bk), cellKeys))) {
    // Every sealed bucket was kept before: the open ones are computed while the counts are
    // read. A bucket computed after its count was read is kept with that count, so a write
    // after the read shows as a new count next time.
    const [versions, opened] = await Promise.all([versionsOf(keepable), compute(open)]);
    const stale: Bucket[] = [];
    for (const bk of keepable) {
      const texts = cache.at(bucketKey(bk), versions.get(bk)!, cellKeys);
      if (texts) kept.set(bk, texts);
      else stale.push(bk);
    }
    const again = await compute(stale);
    keep(stale, versions, again);
    fresh = [opened, again];
  } else {
    const versions = await versionsOf(keepable);
    const missing: Bucket[] = [];
    for (const bk of keepable) {
      const texts = cache.at(bucketKey(bk), versions.get(bk)!, cellKeys);
      if (texts) kept.set(bk, texts);
      else missing.push(bk);
    }
    const computed = await compute([...open, ...missing]);
    keep(missing, versions, computed);
    fresh = [computed];
  }
  cache.hits += kept.size;
  cache.misses += keepable.length - kept.size;

  const parts: Buffer[] = [OPEN];
  for (const mp of makerPairs) {
    const texts: [number, Buffer][] = [];
    for (const [bk, cells] of kept) texts.push([bk.b, cells.get(mp.key)!]);
    for (const f of fresh) for (const [b, text] of f.get(mp.key) ?? []) texts.push([b, text]);
    texts.sort((x, y) => x[0] - y[0]);
    for (const [, text] of texts) {
      if (text.length === 0) continue;
      if (parts.length > 1) parts.push(COMMA);
      parts.push(text);
    }
  }
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

/** The market makers and pairs the caller sees, in the answer's order (market maker, asset, exchange, pair). */
function makerPairsOf(req: MmRequest): MakerPair[] {
  const wallets = new Map<string, [number, number][]>();
  for (const wallet of req.wallets.values()) {
    const list = wallets.get(wallet.organization) ?? [];
    list.push([wallet.id, wallet.number]);
    wallets.set(wallet.organization, list);
  }
  const out: MakerPair[] = [];
  for (const [maker, m] of req.makers) {
    const organization = JSON.stringify(presentOrganization(m.organization));
    // A wallet's id and number are written in its rows: a change of them is another text.
    const signature = JSON.stringify((wallets.get(maker) ?? []).sort((a, b) => a[0] - b[0]));
    for (const pair of m.pairs) {
      out.push({
        maker,
        pair,
        key: [organization, signature, pair.asset, pair.exchange, pair.pair].join('\u0000'),
        head: `{"organization":${organization},"asset":${JSON.stringify(pair.asset)},"exchange":${JSON.stringify(pair.exchange)},"pair":${JSON.stringify(pair.pair)}`,
      });
    }
  }
  return out.sort(
    (a, b) => a.maker.localeCompare(b.maker) || a.pair.asset.localeCompare(b.pair.asset) || a.pair.exchange.localeCompare(b.pair.exchange) || a.pair.pair.localeCompare(b.pair.pair),
  );
}
