// What the targets handlers share: the service's dependencies and the targets repository.
import type { TargetRepository } from '../../../domain/targets/repository.ts';
import type { ApiDeps } from '../../deps.ts';

export interface TargetServices {
  deps: ApiDeps;
  targets: TargetRepository;
}
