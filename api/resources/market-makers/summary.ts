// GET /v2/organizations/market-maker-metrics/summary/ (specification 4.10): per market
// maker, exchange, pair and bucket, volume and depth with their coverage of the whole
// market. Trusted values replace reported ones (addendum section 4): a bucket with any
// wallet's trusted values has a row per wallet (`source: wallet`), else the reported row.
import { presentOrganization } from '../../presenters.ts';
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { timeColumnNames, timestampOf } from '../../../domain/market/timestamps.ts';
import { validators } from '../market/schemas.ts';
import { INTERVALS } from '../../../domain/market/facts.ts';
import { parseMmRequest } from './request.ts';
import type { MmHandler } from './routes.ts';
import { coverage, depthNames, readValues, type Values } from './values.ts';

export const summary: MmHandler = (s) => async (ctx, raw) => {
  const out = wantsCsv(ctx);
  const req = await parseMmRequest(s.deps, ctx, raw, { validate: validators.any, intervals: INTERVALS });
  const { cells, market } = await readValues(s, req, { trustedDepth: true, trustedVolume: true, reported: 'untrusted', market: true });
  const { levels, window } = req;
  const [bid, ask] = [depthNames(levels, 'bid'), depthNames(levels, 'ask')];
  const [bidCov, askCov] = [depthNames(levels, 'bid', '_coverage'), depthNames(levels, 'ask', '_coverage')];
  const columns = ['organization', 'asset', 'exchange', 'pair', ...timeColumnNames(window), 'is_trusted', 'source', 'wallet_id', 'wallet_number', 'volume', 'volume_coverage', ...bid, ...ask, ...bidCov, ...askCov];
  const rows: Record<string, unknown>[] = [];
  for (const c of cells) {
    const whole = market(c.pair, c.b);
    const row = (values: Values, wallet: { id: number; number: number } | undefined) => {
      const r: Record<string, unknown> = {
        organization: presentOrganization(req.makers.get(c.maker)!.organization),
        asset: c.pair.asset,
        exchange: c.pair.exchange,
        pair: c.pair.pair,
        ...timestampOf(window, c.b),
        is_trusted: wallet !== undefined,
        source: wallet ? 'wallet' : 'organization',
        wallet_id: wallet?.id ?? null,
        wallet_number: wallet?.number ?? null,
        volume: values.volume,
        volume_coverage: coverage(values.volume, whole?.volume),
      };
      levels.forEach((_, i) => (r[bid[i]!] = values.bid[i]));
      levels.forEach((_, i) => (r[ask[i]!] = values.ask[i]));
      levels.forEach((_, i) => (r[bidCov[i]!] = coverage(values.bid[i]!, whole?.bid[i])));
      levels.forEach((_, i) => (r[askCov[i]!] = coverage(values.ask[i]!, whole?.ask[i])));
      rows.push(r);
    };
    if (c.trusted.length > 0) for (const t of c.trusted) row(t.values, t.wallet);
    else if (c.reported) row(c.reported, undefined);
  }
  sendRows(ctx, rows, columns, out);
};
