import { expect } from 'chai';
import fs from 'node:fs';
import { checkFixture, FixtureError } from '../../domain/reference/fixtures.ts';
import { validateFixture } from '../../schemas/index.ts';

type Existing = Parameters<typeof checkFixture>[1];
const none: Existing = { exchanges: [], organizations: [], assets: [] };
const demo = JSON.parse(fs.readFileSync(new URL('../../ops/demo/fixture.json', import.meta.url), 'utf8')) as unknown;

function problems(data: unknown, existing: Existing = none): string[] {
  try {
    checkFixture(data, existing);
    return [];
  } catch (e) {
    expect(e).to.be.instanceOf(FixtureError);
    return (e as FixtureError).problems;
  }
}

describe('fixture checks', () => {
  it('accepts the demo fixture, which has what the demo promises', () => {
    expect(problems(demo)).to.deep.equal([]);
    expect(validateFixture(demo)).to.equal(true);
    const d = demo as Required<import('../../schemas/index.ts').FixtureFile>;
    expect(new Set(d.exchanges.map((e) => e.region)).size).to.be.at.least(2);
    expect(d.exchanges.length).to.be.at.least(3);
    expect(d.assets.length).to.be.at.least(6);
    expect(d.assets.filter((a) => a.symbol.endsWith('_PERP')).length).to.be.at.least(2);
    expect(d.organizations.filter((o) => o.kind === 'project').length).to.be.at.least(2);
    const makers = d.organizations.filter((o) => o.kind === 'market_maker').map((o) => o.slug);
    expect(makers.length).to.be.at.least(2);
    for (const m of makers) expect(d.wallets.some((w) => w.organization === m)).to.equal(true);
    expect(d.users.some((u) => u.is_staff)).to.equal(true);
    for (const o of d.organizations) expect(d.users.some((u) => u.organizations?.includes(o.slug))).to.equal(true);
  });

  it('names unknown references', () => {
    const p = problems({ pairs: [{ exchange: 'x', pair: 'A/B', asset: 'A', market_type: 'spot' }] });
    expect(p).to.deep.equal(['pairs[0] (x A/B): exchange "x" is not a known exchange', 'pairs[0] (x A/B): asset "A" is not a known asset']);
  });

  it('accepts references to rows already loaded', () => {
    const existing = { exchanges: ['x'], organizations: [{ slug: 'o', kind: 'project' }], assets: ['A'] };
    expect(problems({ pairs: [{ exchange: 'x', pair: 'A/B', asset: 'A', market_type: 'spot' }] }, existing)).to.deep.equal([]);
  });

  it('rejects a perp pair whose asset is not _PERP, and duplicates', () => {
    const existing = { exchanges: ['x'], organizations: [{ slug: 'o', kind: 'project' }], assets: ['A'] };
    const p = problems(
      { pairs: [{ exchange: 'x', pair: 'A/B', asset: 'A', market_type: 'perp' }, { exchange: 'x', pair: 'A/B', asset: 'A', market_type: 'spot' }] },
      existing,
    );
    expect(p).to.include('pairs[1] (x A/B): appears twice in the file');
    expect(p).to.include('pairs[0] (x A/B): market_type "perp" does not match asset "A" (perpetual assets end in _PERP)');
  });

  it('reports schema errors with the entry, the field and unknown keys', () => {
    expect(problems({ exchanges: [{ slug: 'Bad Slug', name: 'n', region: 'r' }] })).to.deep.equal([
      'exchanges[0] (Bad Slug): slug must match pattern "^[a-z0-9][a-z0-9_-]{0,49}$"',
    ]);
    expect(problems({ exchanges: [{ slug: 'ok', name: 'n', region: 'r', colour: 'red' }] })).to.deep.equal([
      'exchanges[0] (ok): must NOT have additional properties (colour)',
    ]);
    expect(problems({ widgets: [] })[0]).to.equal('(file): must NOT have additional properties (widgets)');
  });
});
