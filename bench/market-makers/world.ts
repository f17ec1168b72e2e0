// The market-maker benchmark's reference world: two exchanges, assets quoted in USDT on
// both (so a pair's USD rate is 1), one project owning every asset, market makers each
// covering every asset on both exchanges with one wallet per exchange, and three users
// (staff, a member of the project, a member of the first market maker).
import crypto from 'node:crypto';
import type { FixtureFile } from '../../schemas/index.ts';
import { rng } from '../../ingest/synthetic/market.ts';

export const PROJECT = 'mmbench-project';
/** Wallet ids are FIRST_WALLET + 2 x maker index + exchange index, so SQL can map a wallet back. */
export const FIRST_WALLET = 7_000_000;

export interface MmPair {
  exchange: string;
  pair: string;
  asset: string;
  /** Mid price (USDT), typical level size (USD) and book shape (bps), as bench/common.ts draws them. */
  price: number;
  levelUsd: number;
  halfSpreadBps: number;
  stepBps: number;
}

export interface MmMaker {
  slug: string;
  /** Its share of the market's depth at each level, and how much its reports exceed what its wallets show. */
  share: number;
  depthFactor: number;
  volumeFactor: number;
}

export interface MmWallet {
  id: number;
  organization: string;
  number: number;
  exchange: string;
}

export interface Credentials {
  email: string;
  password: string;
}

export interface MmWorld {
  exchanges: string[];
  pairs: MmPair[];
  makers: MmMaker[];
  wallets: MmWallet[];
  fixture: FixtureFile;
  users: { staff: Credentials; project: Credentials; maker: Credentials };
}

export function mmWorld(opts: { pairs: number; makers: number; seed?: number }): MmWorld {
  const random = rng(opts.seed ?? 17);
  const exchanges = ['mmbx0', 'mmbx1'];
  const assets = Array.from({ length: Math.ceil(opts.pairs / exchanges.length) }, (_, i) => `MMB${String(i).padStart(3, '0')}`);
  const pairs: MmPair[] = [];
  for (const asset of assets) {
    // Log-uniform prices from 0.001 to 50,000 USD; the book's shape differs per pair.
    const price = Number((10 ** (-3 + random() * 7.7)).toPrecision(5));
    for (const exchange of exchanges) {
      if (pairs.length >= opts.pairs) break;
      pairs.push({ exchange, pair: `${asset}/USDT`, asset, price, levelUsd: 2_000 + random() * 60_000, halfSpreadBps: 0.3 + random() * 8, stepBps: 0.5 + random() * 4 });
    }
  }
  // One maker in four overstates its depth by 35 %, one in five its volume by 20 %; the
  // others report within 3 % of what their wallets show (under the 10 % tolerance).
  const makers: MmMaker[] = Array.from({ length: opts.makers }, (_, m) => ({
    slug: `mmbench-maker-${String(m).padStart(2, '0')}`,
    share: 0.02 + 0.01 * (m % 5),
    depthFactor: m % 4 === 3 ? 1.35 : 1,
    volumeFactor: m % 5 === 2 ? 1.2 : 1,
  }));
  const wallets: MmWallet[] = makers.flatMap((mk, m) => exchanges.map((exchange, e) => ({ id: FIRST_WALLET + 2 * m + e, organization: mk.slug, number: e + 1, exchange })));
  const password = crypto.randomBytes(12).toString('hex');
  const users = {
    staff: { email: 'mmbench-staff@bench.example', password },
    project: { email: 'mmbench-project@bench.example', password },
    maker: { email: 'mmbench-maker@bench.example', password },
  };
  const usedAssets = [...new Set(pairs.map((p) => p.asset))];
  const fixture: FixtureFile = {
    exchanges: exchanges.map((slug, i) => ({ slug, name: `MM bench exchange ${i}`, region: i === 0 ? 'asia' : 'europe' })),
    organizations: [{ slug: PROJECT, name: 'MM bench project', kind: 'project' }, ...makers.map((m, i) => ({ slug: m.slug, name: `MM bench maker ${i}`, kind: 'market_maker' as const }))],
    assets: usedAssets.map((symbol, i) => ({ symbol, name: `MM bench token ${i}`, owner: PROJECT })),
    pairs: pairs.map(({ exchange, pair, asset }) => ({ exchange, pair, asset, market_type: 'spot' as const })),
    coverage: makers.map((m) => ({ organization: m.slug, assets: usedAssets, exchanges })),
    wallets,
    users: [
      { ...users.staff, username: 'mmbench-staff', is_staff: true, organizations: [] },
      { ...users.project, username: 'mmbench-project', organizations: [PROJECT] },
      { ...users.maker, username: 'mmbench-maker', organizations: [makers[0]!.slug] },
    ],
  };
  return { exchanges, pairs, makers, wallets, fixture, users };
}

/** The wallet a maker quotes a pair from: its wallet on the pair's exchange. */
export function walletOf(world: MmWorld, makerIndex: number, pair: MmPair): number {
  return FIRST_WALLET + 2 * makerIndex + world.exchanges.indexOf(pair.exchange);
}
