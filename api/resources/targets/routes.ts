// The targets resource (specification 4.8, 4.9; addendum sections 3 and 6): the list, the
// preview, and saving a preview's batch. Reading takes a token or an API key with `metrics:read`; changing
// targets takes a signed-in member (API keys have no scope for it).
import type Router from '@koa/router';
import { TargetRepository } from '../../../domain/targets/repository.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate } from '../../http/auth.ts';
import { applyBatch } from './batch.ts';
import { targetEvaluations } from './evaluations.ts';
import { listTargets } from './list.ts';
import { previewTargets } from './preview.ts';

export interface TargetServices {
  deps: ApiDeps;
  targets: TargetRepository;
}

export function targetRoutes(router: Router, deps: ApiDeps): void {
  const s: TargetServices = { deps, targets: new TargetRepository(deps.ch) };
  router.get('/v2/organizations/targets/', authenticate(deps, { apiKeyScope: 'metrics:read' }), listTargets(s));
  router.get('/v2/organizations/targets/:id/evaluations/', authenticate(deps, { apiKeyScope: 'metrics:read' }), targetEvaluations(s));
  router.post('/v2/organizations/targets/preview/', authenticate(deps), previewTargets(s));
  router.post('/v2/organizations/targets/batch/', authenticate(deps), applyBatch(s));
}
