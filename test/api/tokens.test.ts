import { expect } from 'chai';
import { Redis } from 'ioredis';
import { TokenStore } from '../../api/auth/tokens.ts';
import { DAY_MS } from '../../lib/time.ts';
import { testStack } from '../support/stack.ts';

describe('TokenStore (Redis)', () => {
  let redis: Redis;
  let now = Date.now();
  let store: TokenStore;
  before(() => {
    redis = new Redis(testStack().config.redisUrl, { keyPrefix: `mmtest:tokens:${process.pid}:${Date.now()}:` });
    store = new TokenStore(redis, () => now);
  });
  after(() => redis.quit());

  it('stores only a digest of the token', async () => {
    const { token } = await store.issue(1, false);
    const keys = await redis.keys(`${redis.options.keyPrefix}auth:token:*`);
    expect(keys.join(' ')).to.not.contain(token);
  });

  it('slides the idle expiry on use: 1 day by default', async () => {
    const { token } = await store.issue(2, false);
    const ttl = await redis.pttl(`auth:token:${(await store.authenticate(token))!.digest}`);
    expect(ttl).to.be.within(DAY_MS - 5_000, DAY_MS);
  });

  it('never lets a token live past 30 days after login, even with remember_me', async () => {
    const loginAt = Date.now();
    now = loginAt;
    const { token } = await store.issue(3, true);
    now = loginAt + 29 * DAY_MS + 12 * 3_600_000; // used again 29.5 days later
    const info = await store.authenticate(token);
    expect(info).to.not.equal(undefined);
    expect(info!.expiry.getTime() - loginAt).to.be.at.most(30 * DAY_MS);
    expect(info!.expiry.getTime() - now).to.be.closeTo(12 * 3_600_000, 1000);
    now = loginAt + 30 * DAY_MS + 1;
    expect(await store.authenticate(token)).to.equal(undefined);
    now = Date.now();
  });

  it('revokeAll keeps only the token asked to keep', async () => {
    const a = await store.issue(4, false);
    const b = await store.issue(4, false);
    const keep = (await store.authenticate(b.token))!.digest;
    expect(await store.revokeAll(4, keep)).to.equal(1);
    expect(await store.authenticate(a.token)).to.equal(undefined);
    expect(await store.authenticate(b.token)).to.not.equal(undefined);
  });

  it('rejects malformed tokens without a lookup', async () => {
    expect(await store.authenticate('not-a-token')).to.equal(undefined);
  });
});
