// GET /v2/organizations/reported-metrics/volume/ (specification 4.12): the volume market
// makers reported, per market maker, exchange, pair and bucket, for every pair with a
// reported volume in the window; a bucket without a reported value is 0.
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { timeColumnNames, timestampOf } from '../../../domain/market/timestamps.ts';
import { validators } from '../market/schemas.ts';
import { makerPairColumns, parseMmRequest } from './request.ts';
import type { MmHandler } from './services.ts';
import { bucketStarts, type Cell } from '../../../domain/market-makers/readings.ts';

export const REPORTED_VOLUME_INTERVALS = ['1M', '1w', '1d', '1h', '5m', 'c', 'a'] as const;

export const reportedVolume: MmHandler = (s) => async (ctx, raw) => {
  const out = wantsCsv(ctx);
  const req = await parseMmRequest(s.deps, ctx, raw, { validate: validators.reportedVolume, intervals: REPORTED_VOLUME_INTERVALS });
  const { cells } = await s.readings.values(req, { trustedDepth: false, trustedVolume: false, reported: 'volume', market: false });
  const columns = ['organization', 'asset', 'exchange', 'pair', ...timeColumnNames(req.window), 'volume'];
  const series = new Map<string, Map<number, Cell>>();
  for (const c of cells) {
    if (!c.reportedVolume) continue;
    const k = `${c.maker}\u0000${c.pair.exchange}\u0000${c.pair.pair}`;
    if (!series.has(k)) series.set(k, new Map());
    series.get(k)!.set(c.b, c);
  }
  const buckets = bucketStarts(req.window);
  const rows: Record<string, unknown>[] = [];
  for (const byBucket of series.values()) {
    const first = byBucket.values().next().value!;
    for (const b of buckets) {
      rows.push({
        ...makerPairColumns(req, first.maker, first.pair),
        ...timestampOf(req.window, b),
        volume: byBucket.get(b)?.reported?.volume ?? 0,
      });
    }
  }
  sendRows(ctx, rows, columns, out);
};
