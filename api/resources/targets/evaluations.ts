// GET /v2/organizations/targets/<id>/evaluations/ (beyond the specification): a target's
// evaluations over a window (time_start / time_end / lookback as in part 4.1; the last 24
// hours by default): the value over each trailing hour, the effective threshold, whether it
// was met and the status after it, so a user sees why a target is in alert. Visible to
// whoever sees the target; anyone else gets 404.
import type { Context } from 'koa';
import { EvaluationRepository } from '../../../domain/targets/evaluations.ts';
import { targetAccess } from '../../../domain/targets/visibility.ts';
import { pathId } from '../../http/contract.ts';
import { principalOf } from '../../http/auth.ts';
import { notFound } from '../../http/errors.ts';
import { parseRequest } from '../market/params.ts';
import { validators } from '../market/schemas.ts';
import type { TargetServices } from './services.ts';

export function targetEvaluations(s: TargetServices) {
  const evaluations = new EvaluationRepository(s.deps.ch);
  return async (ctx: Context) => {
    const id = pathId(ctx);
    const user = principalOf(ctx.state).user;
    const [access, all] = await Promise.all([targetAccess(s.deps, user), s.targets.all()]);
    const target = all.find((t) => t.id === id);
    if (!target || !access.canSee(target)) throw notFound();
    const { window } = parseRequest({ ...ctx.query, interval: 'a' }, validators.any, s.deps.now(), await s.deps.rolledUp.through());
    const from = window.ranges[0]?.[0] ?? 0;
    const to = window.ranges.at(-1)?.[1] ?? 0;
    const rows = await evaluations.history(id, from, to);
    ctx.body = rows.map((r) => ({
      timestamp: new Date(r.minute).toISOString().replace('.000Z', 'Z'),
      value: r.value,
      effective_threshold: r.effective_threshold,
      met: r.met,
      status: r.status,
    }));
  };
}
