// GET /v2/organizations/market-maker-metrics/reconciliation/ (beyond the specification):
// is the market maker's report true? Per market maker, exchange, pair and bucket where it
// both reported and was measured: the reported and the trusted (its wallets together)
// volume and depth at each level, the report's difference in percent of the measurement,
// and a flag where the report exceeds the measurement by more than `tolerance_pct`.
import { presentOrganization } from '../../presenters.ts';
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { timeColumnNames, timestampOf } from '../../../domain/market/timestamps.ts';
import { INTERVALS, levelName } from '../../../domain/market/facts.ts';
import { validators } from '../market/schemas.ts';
import { parseMmRequest } from './request.ts';
import type { MmHandler } from './routes.ts';
import { readValues, sumWallets } from './values.ts';

export const DEFAULT_TOLERANCE_PCT = 10;

/** The report's difference from the measurement, in percent of it; null when the measurement is 0 or either is unknown. */
export function differencePct(reported: number | null, trusted: number | null): number | null {
  if (reported === null || trusted === null || trusted === 0) return null;
  return (100 * (reported - trusted)) / trusted;
}

/** Whether the report exceeds the measurement by more than the tolerance (any report above a measured 0 does). */
export function overstated(reported: number | null, trusted: number | null, tolerancePct: number): boolean {
  if (reported === null || trusted === null) return false;
  return reported > trusted * (1 + tolerancePct / 100) && reported > trusted;
}

export const reconciliation: MmHandler = (s) => async (ctx, raw) => {
  const out = wantsCsv(ctx);
  const req = await parseMmRequest(s.deps, ctx, raw, { validate: validators.any, intervals: INTERVALS });
  const tolerance = req.params.tolerance_pct ?? DEFAULT_TOLERANCE_PCT;
  const { cells } = await readValues(s, req, { trustedDepth: true, trustedVolume: true, reported: 'all', market: false });
  const metrics = ['volume', ...req.levels.map((l) => `bid_${levelName(l)}bps`), ...req.levels.map((l) => `ask_${levelName(l)}bps`)];
  const columns = [
    'organization',
    'asset',
    'exchange',
    'pair',
    ...timeColumnNames(req.window),
    'tolerance_pct',
    'flag',
    'flagged',
    ...metrics.flatMap((m) => [`${m}_reported`, `${m}_trusted`, `${m}_diff_pct`, `${m}_flag`]),
  ];
  const rows: Record<string, unknown>[] = [];
  for (const c of cells) {
    if (c.trusted.length === 0 || !c.reported) continue;
    const t = sumWallets(c.trusted);
    const pairs: [string, number | null, number | null][] = [
      ['volume', c.reported.volume, t.volume],
      ...req.levels.map((l, i): [string, number | null, number | null] => [`bid_${levelName(l)}bps`, c.reported!.bid[i]!, t.bid[i]!]),
      ...req.levels.map((l, i): [string, number | null, number | null] => [`ask_${levelName(l)}bps`, c.reported!.ask[i]!, t.ask[i]!]),
    ];
    const r: Record<string, unknown> = {
      organization: presentOrganization(req.makers.get(c.maker)!.organization),
      asset: c.pair.asset,
      exchange: c.pair.exchange,
      pair: c.pair.pair,
      ...timestampOf(req.window, c.b),
      tolerance_pct: tolerance,
      flag: false,
      flagged: [] as string[],
    };
    for (const [m, reported, trusted] of pairs) {
      const flag = overstated(reported, trusted, tolerance);
      r[`${m}_reported`] = reported;
      r[`${m}_trusted`] = trusted;
      r[`${m}_diff_pct`] = differencePct(reported, trusted);
      r[`${m}_flag`] = flag;
      if (flag) (r.flagged as string[]).push(m);
    }
    r.flag = (r.flagged as string[]).length > 0;
    // CSV cells hold text: the flagged metrics space-separated.
    if (out.csv) r.flagged = (r.flagged as string[]).join(' ');
    rows.push(r);
  }
  sendRows(ctx, rows, columns, out);
};
