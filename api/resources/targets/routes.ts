// The targets resource (specification 4.8, 4.9; addendum sections 3 and 6): the list, the
// preview, and saving a preview's batch. Reading takes a token or an API key with `metrics:read`; changing
// targets takes a signed-in member (API keys have no scope for it).
import type { Handlers } from '../../http/contract.ts';
import { allowedIf, principalOf } from '../../http/auth.ts';
import { targetAccess } from '../../../domain/targets/visibility.ts';
import { mayManageTargets } from '../../../domain/targets/facts.ts';
import { TARGET_MESSAGES } from './input.ts';
import type { ApiDeps } from '../../deps.ts';
import { applyBatch } from './batch.ts';
import { targetEvaluations } from './evaluations.ts';
import { listTargets } from './list.ts';
import { previewTargets } from './preview.ts';
import type { TargetServices } from './services.ts';

export function targetHandlers(deps: ApiDeps): Handlers {
  const s: TargetServices = { deps, targets: deps.targets };
  const mayManage = allowedIf(async (ctx) => mayManageTargets(await targetAccess(deps, principalOf(ctx.state).user)), TARGET_MESSAGES.notManager);
  return {
    listTargets: listTargets(s),
    listTargetEvaluations: targetEvaluations(s),
    // Who may not set targets at all is told so whatever its body (403 before 400, specification 5.4).
    previewTargets: { guard: mayManage, handle: previewTargets(s) },
    applyTargetBatch: { guard: mayManage, handle: applyBatch(s) },
  };
}
