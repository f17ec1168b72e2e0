// The targets resource (specification 4.8, 4.9; addendum sections 3 and 6): the list, the
// preview, and saving a preview's batch. Reading takes a token or an API key with `metrics:read`; changing
// targets takes a signed-in member (API keys have no scope for it).
import type { Handlers } from '../../http/contract.ts';
import type { ApiDeps } from '../../deps.ts';
import { applyBatch } from './batch.ts';
import { targetEvaluations } from './evaluations.ts';
import { listTargets } from './list.ts';
import { previewTargets } from './preview.ts';
import type { TargetServices } from './services.ts';

export function targetHandlers(deps: ApiDeps): Handlers {
  const s: TargetServices = { deps, targets: deps.targets };
  return {
    listTargets: listTargets(s),
    listTargetEvaluations: targetEvaluations(s),
    previewTargets: previewTargets(s),
    applyTargetBatch: applyBatch(s),
  };
}
