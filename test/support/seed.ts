// The kill tests choose their kill points at random. Each draws from a seeded generator
// and prints its seed, so a failure can be replayed: TEST_SEED=<seed> npx mocha <file>.
export function seededRandom(what: string): () => number {
  const given = process.env.TEST_SEED;
  const seed = given !== undefined && /^\d+$/.test(given) ? Number(given) : Math.floor(Math.random() * 2 ** 32);
  process.stderr.write(`[test] ${what}: random seed ${seed} (replay with TEST_SEED=${seed})\n`);
  // mulberry32: small, fast, and the same sequence for the same seed everywhere.
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
