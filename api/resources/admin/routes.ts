// POST /v1/admin/fixtures/: loads a reference-data fixture into the running service. With
// embedded ClickHouse only this process may open the data folder, so `npm run seed` hands
// the file here, authenticated by the operator secret or a staff token.
import type { Handlers, QueryOf } from '../../http/contract.ts';
import { FixtureError } from '../../../domain/reference/fixtures.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf, requireStaff } from '../../http/auth.ts';
import { badRequest } from '../../http/errors.ts';
import { DAY_MS } from '../../../lib/time.ts';

export function adminHandlers(deps: ApiDeps): Handlers {
  return {
    loadFixture: [requireStaff, async (ctx) => {
      try {
        const summary = await deps.loadFixture(ctx.request.body);
        deps.log.info('fixture loaded', { by: principalOf(ctx.state).user.username, ...summary });
        ctx.body = { loaded: summary };
      } catch (e) {
        if (e instanceof FixtureError) throw badRequest({ fixture: e.problems });
        throw e;
      }
    }],

    // Per-minute order-book rows of one pair, as stored: for operators checking ingestion.
    listOrderbookMinutes: [requireStaff, async (ctx) => {
      const q = ctx.state.query as QueryOf<'listOrderbookMinutes'>;
      const to = q.time_end ? new Date(q.time_end) : new Date();
      const from = q.time_start ? new Date(q.time_start) : new Date(to.getTime() - DAY_MS);
      if (from >= to) throw badRequest({ time_start: ['Must be before time_end.'] });
      if (to.getTime() - from.getTime() > 31 * DAY_MS) throw badRequest({ time_start: ['The window may span at most 31 days.'] });
      ctx.body = await deps.orderBookMinutes.minutes({ exchange: q.exchange, pair: q.pair, from, to, limit: 50_000 });
    }],

    // What the processors have done since start (rows written, dead-lettered, skipped), how
    // far the hours (and the market's open hour) are rolled up, and what the market caches
    // hold and saved (uptime buckets, window pieces: answered from them or computed).
    getStatus: [requireStaff, async (ctx) => {
      const u = deps.uptimeCache;
      const w = deps.windowCache;
      const [through, market] = await Promise.all([deps.rolledUp.through(), deps.rolledUp.market()]);
      const iso = (t: number) => (Number.isFinite(t) ? new Date(t).toISOString() : null);
      ctx.body = {
        processors: deps.processorStats(),
        rollups: { rolled_up_to: iso(through), market_rolled_up_to: iso(market) },
        uptime_cache: { enabled: u.enabled, max_bytes: u.maxBytes, bytes: u.bytes, pairs: u.size, bucket_hits: u.hits, bucket_misses: u.misses },
        window_cache: { enabled: w.enabled, max_bytes: w.maxBytes, bytes: w.bytes, pieces: w.size, piece_hits: w.hits, piece_misses: w.misses },
      };
    }],
  };
}
