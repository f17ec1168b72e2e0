// Reported metrics (addendum section 3): the push of a market maker's own values, by a
// member's token or an API key with the `reported_metrics:write` scope.
import type { ApiDeps } from '../../deps.ts';
import type { Handlers } from '../../http/contract.ts';
import { pushReportedMetrics } from './push.ts';

export function reportedMetricHandlers(deps: ApiDeps): Handlers {
  return { pushReportedMetrics: pushReportedMetrics(deps) };
}
