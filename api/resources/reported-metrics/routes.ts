// Reported metrics (addendum section 3): the push of a market maker's own values, by a
// member's token or an API key with the `reported_metrics:write` scope.
import type Router from '@koa/router';
import type { ApiDeps } from '../../deps.ts';
import { authenticate } from '../../http/auth.ts';
import { pushReportedMetrics } from './push.ts';

export function reportedMetricRoutes(router: Router, deps: ApiDeps): void {
  router.post('/v2/organizations/reported-metrics/', authenticate(deps, { apiKeyScope: 'reported_metrics:write' }), pushReportedMetrics(deps));
}
