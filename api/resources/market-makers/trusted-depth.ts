// GET /v2/organizations/trusted-metrics/depth/ (specification 4.11): trusted depth per
// market maker, exchange, pair and bucket, its wallets on the pair added together.
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { timeColumnNames, timestampOf } from '../../../domain/market/timestamps.ts';
import { INTERVALS } from '../../../domain/market/facts.ts';
import { validators } from '../market/schemas.ts';
import { depthNames, makerPairColumns, parseMmRequest } from './request.ts';
import type { MmHandler } from './services.ts';
import { addPackedWallet, unpackValues } from '../../../domain/market-makers/values.ts';


export const trustedDepth: MmHandler = (s) => async (ctx, raw) => {
  const out = wantsCsv(ctx);
  const req = await parseMmRequest(s.deps, ctx, raw, { validate: validators.any, intervals: INTERVALS });
  const { cells } = await s.readings.values(req, { trustedDepth: true, trustedVolume: false, reported: 'no', market: false });
  const [bid, ask] = [depthNames(req.levels, 'bid'), depthNames(req.levels, 'ask')];
  const columns = ['organization', 'asset', 'exchange', 'pair', ...timeColumnNames(req.window), ...bid, ...ask];
  const rows: Record<string, unknown>[] = [];
  const n = req.levels.length;
  const width = 1 + 2 * n;
  for (const c of cells) {
    // A bucket of fills only has no depth to show.
    const withDepth = c.trusted.filter((t) => t.values.subarray(1).some((v) => !Number.isNaN(v)));
    if (withDepth.length === 0) continue;
    const sum = Float64Array.from(withDepth[0]!.values);
    for (const t of withDepth.slice(1)) addPackedWallet(sum, 0, t.values, 0, width);
    const v = unpackValues(sum, n);
    const r: Record<string, unknown> = {
      ...makerPairColumns(req, c.maker, c.pair),
      ...timestampOf(req.window, c.b),
    };
    req.levels.forEach((_, i) => (r[bid[i]!] = v.bid[i]));
    req.levels.forEach((_, i) => (r[ask[i]!] = v.ask[i]));
    rows.push(r);
  }
  sendRows(ctx, rows, columns, out);
};
