import { Redis } from 'ioredis';
import type { Config } from './config.ts';

/** Redis holds only what may be lost: tokens, challenges, throttle counters. */
export function openRedis(config: Pick<Config, 'redisUrl'>, keyPrefix = ''): Redis {
  return new Redis(config.redisUrl, { keyPrefix, maxRetriesPerRequest: 3, lazyConnect: false, enableAutoPipelining: true });
}
