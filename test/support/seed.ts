// The kill tests choose their kill points at random. Each draws from a seeded generator
// and prints its seed, so a failure can be replayed: TEST_SEED=<seed> npx mocha <file>.
import { rng } from '../../ingest/synthetic/market.ts';

export function seededRandom(what: string): () => number {
  const given = process.env.TEST_SEED;
  const seed = given !== undefined && /^\d+$/.test(given) ? Number(given) : Math.floor(Math.random() * 2 ** 32);
  process.stderr.write(`[test] ${what}: random seed ${seed} (replay with TEST_SEED=${seed})\n`);
  // The synthetic feed's generator: the same sequence for the same seed everywhere.
  return rng(seed);
}
