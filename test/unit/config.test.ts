import { expect } from 'chai';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../lib/config.ts';

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).to.equal(8080);
    expect(c.kafkaBrokers).to.deep.equal(['127.0.0.1:9092']);
    expect(c.redisUrl).to.equal('redis://127.0.0.1:6379');
    expect(c.schemaRegistryUrl).to.equal('http://127.0.0.1:8081');
    expect(c.clickhouseUrl).to.equal(undefined);
    expect(c.dataDir).to.equal(path.resolve('.data'));
    expect(c.latenessMs).to.equal(120_000);
    expect(c).to.include({ webauthnRpId: 'localhost', webauthnOrigin: 'http://localhost:8080', webauthnRpName: 'mm-metrics' });
  });

  it('reads every variable', () => {
    const c = loadConfig({ PORT: '9000', KAFKA_BROKERS: 'a:1, b:2', REDIS_URL: 'redis://r:7000/1', CLICKHOUSE_URL: 'http://ch:8123', DATA_DIR: '/tmp/x', LATENESS_SECONDS: '30' });
    expect(c).to.include({ port: 9000, redisUrl: 'redis://r:7000/1', clickhouseUrl: 'http://ch:8123', dataDir: '/tmp/x', latenessMs: 30_000 });
    expect(c.kafkaBrokers).to.deep.equal(['a:1', 'b:2']);
  });

  it('rejects bad values naming each variable', () => {
    try {
      loadConfig({ PORT: '80x', KAFKA_BROKERS: 'nohost', REDIS_URL: 'http://x', CLICKHOUSE_URL: 'nope', LOG_LEVEL: 'loud' });
      expect.fail('should throw');
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      const msg = (e as Error).message;
      for (const v of ['PORT="80x"', 'KAFKA_BROKERS="nohost"', 'REDIS_URL="http://x"', 'CLICKHOUSE_URL="nope"', 'LOG_LEVEL="loud"']) expect(msg).to.contain(v);
      expect((e as ConfigError).problems).to.have.length(5);
    }
  });

  it('reads SCHEMA_REGISTRY_URL and rejects one that is not an http(s) address', () => {
    expect(loadConfig({ SCHEMA_REGISTRY_URL: 'http://sr:8081/' }).schemaRegistryUrl).to.equal('http://sr:8081');
    expect(loadConfig({ SCHEMA_REGISTRY_URL: 'https://u:p@sr.example/apis/ccompat/v7' }).schemaRegistryUrl).to.equal('https://u:p@sr.example/apis/ccompat/v7');
    expect(() => loadConfig({ SCHEMA_REGISTRY_URL: 'sr:8081' })).to.throw(/SCHEMA_REGISTRY_URL="sr:8081": expected a http or https URL/);
    expect(() => loadConfig({ SCHEMA_REGISTRY_URL: 'http://sr:8081/?x=1' })).to.throw(/SCHEMA_REGISTRY_URL="http:\/\/sr:8081\/\?x=1": expected no query or fragment/);
  });

  it('keeps every minute row by default, and takes a retention of at least 32 days', () => {
    expect(loadConfig({}).minuteRetentionDays).to.equal(0);
    expect(loadConfig({ MINUTE_RETENTION_DAYS: '90' }).minuteRetentionDays).to.equal(90);
    expect(() => loadConfig({ MINUTE_RETENTION_DAYS: '7' })).to.throw(/MINUTE_RETENTION_DAYS="7": expected 0 \(keep every minute row\) or at least 32 days/);
  });

  it('sizes the uncompressed cache in MB, 512 by default, 0 turning it off', () => {
    expect(loadConfig({}).uncompressedCacheBytes).to.equal(512 * 2 ** 20);
    expect(loadConfig({ UNCOMPRESSED_CACHE_MB: '0' }).uncompressedCacheBytes).to.equal(0);
    expect(loadConfig({ UNCOMPRESSED_CACHE_MB: '64' }).uncompressedCacheBytes).to.equal(64 * 2 ** 20);
    expect(() => loadConfig({ UNCOMPRESSED_CACHE_MB: '-1' })).to.throw(/UNCOMPRESSED_CACHE_MB="-1"/);
  });

  it('rejects an out-of-range port', () => {
    expect(() => loadConfig({ PORT: '70000' })).to.throw(/PORT="70000": expected a number from 0 to 65535/);
  });

  describe('WebAuthn relying party', () => {
    it('reads the RP id, origin and name', () => {
      const c = loadConfig({ WEBAUTHN_RP_ID: 'Example.com', WEBAUTHN_ORIGIN: 'https://app.example.com/', WEBAUTHN_RP_NAME: 'Acme metrics' });
      expect(c).to.include({ webauthnRpId: 'example.com', webauthnOrigin: 'https://app.example.com', webauthnRpName: 'Acme metrics' });
      expect(loadConfig({ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGIN: 'https://example.com:8443' }).webauthnOrigin).to.equal('https://example.com:8443');
    });

    it('rejects a bad RP id, origin or name with a clear message', () => {
      const cases: [Record<string, string>, RegExp][] = [
        [{ WEBAUTHN_RP_ID: 'https://example.com' }, /WEBAUTHN_RP_ID="https:\/\/example\.com": expected a domain name/],
        [{ WEBAUTHN_RP_ID: 'example.com:8080' }, /WEBAUTHN_RP_ID="example\.com:8080": expected a domain name/],
        [{ WEBAUTHN_RP_ID: '10.0.0.1' }, /WEBAUTHN_RP_ID="10\.0\.0\.1": expected a domain name/],
        [{ WEBAUTHN_ORIGIN: 'localhost:8080' }, /WEBAUTHN_ORIGIN="localhost:8080": /],
        [{ WEBAUTHN_ORIGIN: 'http://localhost:8080/app' }, /WEBAUTHN_ORIGIN="http:\/\/localhost:8080\/app": expected an origin only/],
        [{ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGIN: 'http://example.com' }, /WEBAUTHN_ORIGIN="http:\/\/example\.com": expected https \(http only for localhost\)/],
        [{ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGIN: 'https://example.org' }, /WEBAUTHN_ORIGIN="https:\/\/example\.org": its host must be WEBAUTHN_RP_ID \("example\.com"\) or a subdomain of it/],
        [{ WEBAUTHN_RP_ID: 'example.com', WEBAUTHN_ORIGIN: 'https://notexample.com' }, /its host must be WEBAUTHN_RP_ID/],
        [{ WEBAUTHN_RP_NAME: 'x'.repeat(65) }, /WEBAUTHN_RP_NAME="x+": expected at most 64 printable characters/],
      ];
      for (const [env, message] of cases) {
        try {
          loadConfig(env);
          expect.fail(`should reject ${JSON.stringify(env)}`);
        } catch (e) {
          expect(e, JSON.stringify(env)).to.be.instanceOf(ConfigError);
          expect((e as ConfigError).problems, JSON.stringify(env)).to.have.length(1);
          expect((e as Error).message).to.match(message);
        }
      }
    });
  });
});
