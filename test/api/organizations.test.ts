import { expect } from 'chai';
import { call, login, seed, world } from '../support/helpers.ts';

describe('GET /v1/organizations/', () => {
  const w = world();
  before(() => seed(w.fixture));

  it('shows a project member its organization with the assets it owns and their pairs', async () => {
    const r = await call('GET', '/v1/organizations/', { token: await login(w.users.owner.email, w.password) });
    expect(r.status).to.equal(200);
    expect(r.body).to.have.length(1);
    const org = r.body[0];
    expect(org).to.include({ slug: w.project, kind: 'project' });
    expect(org.assets.map((a: { symbol: string }) => a.symbol)).to.deep.equal([w.asset, `${w.asset}_PERP`, w.other].sort());
    expect(org.pairs).to.have.length(4);
    expect(org.exchanges.map((e: { slug: string }) => e.slug).sort()).to.deep.equal([w.ex, w.ex2].sort());
    expect(org.exchanges[0]).to.have.all.keys('slug', 'name', 'icon_url');
  });

  it('shows a market maker only what its coverage lists', async () => {
    const r = await call('GET', '/v1/organizations/', { token: await login(w.users.maker.email, w.password) });
    expect(r.status).to.equal(200);
    const org = r.body[0];
    expect(org).to.include({ slug: w.mm, kind: 'market_maker' });
    expect(org.assets.map((a: { symbol: string }) => a.symbol)).to.deep.equal([w.asset]);
    // coverage names one exchange: the asset's pair on the other exchange is not covered
    expect(org.pairs).to.deep.equal([{ exchange: w.ex, pair: `${w.asset}/USDT`, asset: w.asset, market_type: 'spot' }]);
  });

  it('shows staff every organization and a user without memberships none', async () => {
    const staff = await call('GET', '/v1/organizations/', { token: await login(w.users.staff.email, w.password) });
    const slugs = staff.body.map((o: { slug: string }) => o.slug);
    expect(slugs).to.include.members([w.project, w.mm]);
    const loner = await call('GET', '/v1/organizations/', { token: await login(w.users.loner.email, w.password) });
    expect(loner.body).to.deep.equal([]);
  });

  it('needs authentication', async () => {
    const r = await call('GET', '/v1/organizations/');
    expect(r.status).to.equal(401);
  });
});
