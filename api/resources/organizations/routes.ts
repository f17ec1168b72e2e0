// GET /v1/organizations/: the caller's organizations with the assets, exchanges and pairs
// each covers (addendum section 3). API keys of either scope may read it: a client that
// reads metrics or pushes reported ones needs to know which organizations and assets its
// owner has.
import type { Handlers } from '../../http/contract.ts';
import { organizationsOf, scopeOf } from '../../../domain/reference/visibility.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate, principalOf } from '../../http/auth.ts';
import { presentExchange } from '../../presenters.ts';

export function organizationHandlers(deps: ApiDeps): Handlers {
  return {
    listOrganizations: async (ctx) => {
      const p = principalOf(ctx.state);
      const orgs = await organizationsOf(deps, p.user);
      if (orgs.length === 0) {
        ctx.body = [];
        return;
      }
      const lists = await deps.referenceLists.lists();
      ctx.body = orgs.map((org) => {
        const scope = scopeOf(org, lists);
        return {
          slug: org.slug,
          name: org.name,
          kind: org.kind,
          assets: scope.assets.map((a) => ({ symbol: a.symbol, name: a.name, labels: a.labels })),
          exchanges: scope.exchanges.map(presentExchange),
          pairs: scope.pairs.map((x) => ({ exchange: x.exchange, pair: x.pair, asset: x.asset, market_type: x.market_type })),
        };
      });
    },
  };
}
