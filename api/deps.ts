import type { Redis } from 'ioredis';
import type { ClickHouse } from '../lib/clickhouse.ts';
import type { Config } from '../lib/config.ts';
import type { FixtureSummary } from '../domain/reference/fixtures.ts';
import type { Logger } from '../lib/log.ts';
import type { IdAllocator } from '../lib/ids.ts';
import type { ApiKeyRepository } from '../domain/accounts/api-keys.ts';
import type { PasskeyRepository } from '../domain/accounts/passkeys.ts';
import type { ReferenceRepository, ReferenceSnapshot } from '../domain/reference/repository.ts';
import type { TotpDeviceRepository } from '../domain/accounts/totp-devices.ts';
import type { OrderBookMinuteRepository } from '../domain/market/repositories/orderbook-minutes.ts';
import type { User, UserRepository } from '../domain/accounts/users.ts';
import type { SharedReads } from '../lib/shared-reads.ts';
import type { ConsumerStats } from '../lib/kafka.ts';
import type { ChallengeStore } from './auth/challenges.ts';
import type { Locks } from '../lib/locks.ts';
import type { TokenStore } from './auth/tokens.ts';
import type { TwoFactorGuard } from './auth/two-factor.ts';
import type { UptimeCache } from './market-caches/uptime-cache.ts';
import type { RecentAnswers } from './market-caches/recent-answers.ts';
import type { PartialsCache } from './market-caches/window-partials.ts';
import type { MarketMakerCaches } from './resources/market-makers/sealed-rows.ts';
import type { Limit, Throttle } from './http/throttle.ts';
import type { ReportedMetricsPublisher } from '../ingest/reported-metrics-publisher.ts';
import type { RolledUp } from '../domain/market/repositories/rollup-marks.ts';
import type { StreamHub } from './stream/hub.ts';
import type { AgreementStore } from '../domain/agreements/store.ts';
import type { TargetRepository } from '../domain/targets/repository.ts';
import { MINUTE_MS } from '../lib/time.ts';

export interface ThrottleLimits {
  loginPerAccount: Limit;
  loginPerAddress: Limit;
  /** POST /v1/totp/login/, per account of the challenge. */
  totpLoginPerAccount: Limit;
  totpLoginPerAddress: Limit;
  /** POST /v1/user/api-keys/ (it verifies the password). */
  apiKeyCreatePerAccount: Limit;
  apiKeyCreatePerAddress: Limit;
  /** Passkey registration options (per account) and sign-in options (per e-mail given). */
  passkeyOptionsPerAccount: Limit;
  passkeyOptionsPerAddress: Limit;
  /** The other endpoints that verify the password: password change, TOTP setup and disable. */
  passwordCheckPerAccount: Limit;
  passwordCheckPerAddress: Limit;
}

/** Documented in docs/security.md; tests pass tighter or looser ones. */
export const DEFAULT_LIMITS: ThrottleLimits = {
  loginPerAccount: { limit: 10, windowMs: MINUTE_MS },
  loginPerAddress: { limit: 30, windowMs: MINUTE_MS },
  totpLoginPerAccount: { limit: 10, windowMs: MINUTE_MS },
  totpLoginPerAddress: { limit: 30, windowMs: MINUTE_MS },
  apiKeyCreatePerAccount: { limit: 10, windowMs: MINUTE_MS },
  apiKeyCreatePerAddress: { limit: 30, windowMs: MINUTE_MS },
  passkeyOptionsPerAccount: { limit: 10, windowMs: MINUTE_MS },
  passkeyOptionsPerAddress: { limit: 30, windowMs: MINUTE_MS },
  passwordCheckPerAccount: { limit: 10, windowMs: MINUTE_MS },
  passwordCheckPerAddress: { limit: 30, windowMs: MINUTE_MS },
};

/** Everything the API needs, passed in: tests build their own. */
export interface ApiDeps {
  config: Pick<Config, 'host' | 'port' | 'webauthnRpId' | 'webauthnOrigin' | 'webauthnRpName' | 'latenessMs'> & Partial<Pick<Config, 'faults' | 'answerReuseMs' | 'windowBlockMaxPairs'>>;
  log: Logger;
  ch: ClickHouse;
  redis: Redis;
  tokens: TokenStore;
  throttle: Throttle;
  users: UserRepository;
  /**
   * Users as requests authenticate them (without the password hash), shared by the requests
   * of this process: lib/shared-reads.ts. A fixture load through this process drops them.
   */
  activeUsers: SharedReads<number, User | undefined>;
  /** Users' active memberships (organization slugs), shared likewise and dropped by the same loads. */
  memberships: SharedReads<number, readonly string[]>;
  reference: ReferenceRepository;
  /** Assets, exchanges and pairs as market requests read them (shared, refreshed often). */
  referenceLists: ReferenceSnapshot;
  orderBookMinutes: OrderBookMinuteRepository;
  /** Uptime rows of sealed buckets, kept between requests (api/market-caches/uptime-cache.ts). */
  uptimeCache: UptimeCache;
  /** Partials of sealed window pieces for summary and leaderboard (api/market-caches/window-partials.ts). */
  windowCache: PartialsCache;
  /** What the market-maker endpoints keep of sealed buckets (api/resources/market-makers/sealed-rows.ts). */
  marketMakerCaches: MarketMakerCaches;
  /** Before when the hour and day rows are complete: the lowest of the processors' marks, read at most once a second. */
  rolledUp: RolledUp;
  /** Market answers shared by identical requests for up to a second; by default one per app, after config.answerReuseMs (api/market-caches/recent-answers.ts). */
  marketAnswers?: RecentAnswers;
  limits: ThrottleLimits;
  /** The clock of the account-security rules (key expiry, challenges, lockouts, codes). */
  now: () => number;
  totpDevices: TotpDeviceRepository;
  apiKeys: ApiKeyRepository;
  passkeys: PasskeyRepository;
  /** Ids of API keys and passkeys, unique across API processes. */
  ids: IdAllocator;
  /** Two-factor sign-in challenges and WebAuthn ceremonies (Redis, single use). */
  challenges: ChallengeStore;
  /** TOTP code checks: replay protection and the lockout (Redis). */
  twoFactor: TwoFactorGuard;
  /** Locks shared by every API process (Redis). */
  locks: Locks;
  /** Loans, RFQs and proposals, every version (domain/agreements/store.ts). */
  agreements: AgreementStore;
  /** Target definitions and their states. */
  targets: TargetRepository;
  /** Secret of the local operator (`npm run seed`); absent disables that scheme. */
  opsToken?: string;
  loadFixture(data: unknown): Promise<FixtureSummary>;
  /** Produces pushed reported metrics to mm.reported (ingest/reported-metrics-publisher.ts). */
  reportedMetrics: ReportedMetricsPublisher;
  processorStats(): Record<string, ConsumerStats>;
  /** The event stream's hub (api/stream/hub.ts); none: GET /v2/stream/ fails. */
  stream?: StreamHub;
}
