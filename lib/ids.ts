// Integer ids for rows created by API requests (API keys, passkeys), unique across every
// API process: a Redis counter per table, never below the table's largest id. Passing the
// table's max(id) on each call re-seeds the counter if Redis was emptied or restored from
// an older snapshot, so an id is never handed out twice for rows that were written.
import type { Redis } from 'ioredis';

const NEXT_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if floor > current then redis.call('SET', KEYS[1], ARGV[1]) end
return redis.call('INCR', KEYS[1])
`;

type IdRedis = Redis & { nextId(key: string, floor: number): Promise<number> };

export class IdAllocator {
  private readonly redis: IdRedis;

  constructor(redis: Redis) {
    redis.defineCommand('nextId', { numberOfKeys: 1, lua: NEXT_SCRIPT });
    this.redis = redis as IdRedis;
  }

  /** The next id of `sequence`, greater than `floor` (the table's largest id). */
  async next(sequence: string, floor: number): Promise<number> {
    return Number(await this.redis.nextId(`ids:${sequence}`, floor));
  }
}
