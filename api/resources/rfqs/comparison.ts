// The comparison view (addendum section 8; docs/rfq.md, "Comparison"): each proposal as
// stored, with its cost, the intrinsic value of its options at today's price (the asset's
// 24-hour TWAP), whether it meets each requirement, and its market maker's measured track
// record (read once per market maker of the page).
import { assetTwap } from '../../../domain/market/prices.ts';
import type { Organization } from '../../../domain/reference/repository.ts';
import { scopeOf } from '../../../domain/reference/visibility.ts';
import { costOf, optionValueOf, requirementsMet } from '../../../domain/rfq/comparison.ts';
import type { Proposal, Rfq } from '../../../domain/rfq/rfq.ts';
import { trackRecord, TRACK_RECORD_LEVELS, type TrackRecord } from '../../../domain/rfq/track-record.ts';
import { presentProposal } from './present.ts';
import type { ApiDeps } from '../../deps.ts';
import { DAY_MS } from '../../../lib/time.ts';

/** The depth levels a requirement names (depth, depth coverage and depth uptime metrics). */
export function requirementLevels(q: Pick<Rfq, 'requirements'>): number[] {
  const out: number[] = [];
  for (const r of q.requirements) {
    const m = /(?:bid|ask)_([\d.]+)bps/.exec(r.metric);
    if (m) out.push(Number(m[1]));
  }
  return out;
}

export async function compareProposals(deps: ApiDeps, q: Rfq, proposals: readonly Proposal[], organizations: ReadonlyMap<string, Organization>, now: number) {
  if (proposals.length === 0) return [];
  const [lists, rolledUpTo] = await Promise.all([deps.referenceLists.lists(), deps.rolledUp.through()]);
  const makers = [...new Set(proposals.map((p) => p.market_maker))];
  const [price, wallets] = await Promise.all([assetTwap(deps.ch, q.asset, lists.pairs, now - DAY_MS, now, rolledUpTo), deps.reference.wallets()]);
  const levels = [...TRACK_RECORD_LEVELS, ...requirementLevels(q)];
  const records = new Map<string, TrackRecord>();
  await Promise.all(
    makers.map(async (m) => {
      const org = organizations.get(m) ?? { slug: m, name: m, kind: 'market_maker' as const };
      const scope = scopeOf(org, lists);
      records.set(m, await trackRecord(deps.ch, { organization: m, pairs: scope.pairs, wallets: wallets.filter((w) => w.organization === m), now, levels, rolledUpTo, latenessMs: deps.config.latenessMs }));
    }),
  );
  return proposals.map((p) => {
    const cost = costOf(p, q.term_days, price);
    return {
      ...presentProposal(p, organizations),
      price,
      cost_usd: cost.cost_usd,
      cost: { retainer_usd: cost.retainer_usd, interest_usd: cost.interest_usd, term_days: q.term_days },
      option_value_usd: optionValueOf(p, price),
      requirements_met: requirementsMet(q, p),
      track_record: records.get(p.market_maker)!,
    };
  });
}
