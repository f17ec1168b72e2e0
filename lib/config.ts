// The one place that reads the environment. Every variable is parsed once, typed, and
// rejected with a message naming it; nothing is silently coerced.
import path from 'node:path';

export interface Config {
  host: string;
  port: number;
  kafkaBrokers: string[];
  topicPrefix: string;
  redisUrl: string;
  /** The schema registry: a bare address (Apicurio or Confluent, found by asking) or the Confluent API's base URL. */
  schemaRegistryUrl: string;
  /** Unset: embedded chdb under dataDir. Set: a ClickHouse server over HTTP(S). */
  clickhouseUrl: string | undefined;
  clickhouseDatabase: string;
  dataDir: string;
  /** Event-time lateness per pair; older snapshots go to the dead-letter topic. */
  latenessMs: number;
  /** How often the processors write closed minutes and commit. */
  flushIntervalMs: number;
  /** Bytes of sealed uptime buckets the API keeps between requests (api/market-caches/uptime-cache.ts); 0: none. */
  uptimeCacheBytes: number;
  /** Embedded engine: bytes of decompressed blocks it keeps for the API's reads (ClickHouse's uncompressed cache); 0: none. */
  uncompressedCacheBytes: number;
  /** Bytes of sealed window pieces' partials the API keeps (api/market-caches/window-partials.ts); 0: none. */
  windowCacheBytes: number;
  /** How long a market answer is shared by identical requests (api/market-caches/recent-answers.ts), at most 1000; 0: never. */
  answerReuseMs: number;
  /** Callers of at most this many pairs have a window's minutes answered from hour blocks (api/market-caches/minute-blocks.ts); 0 turns them off. */
  windowBlockMaxPairs: number;
  /** Days minute rows are kept (a TTL; hours and days stay); 0 keeps them all. */
  minuteRetentionDays: number;
  /** Bot API token of the Telegram notifier; none turns notifications off. */
  telegramBotToken: string | undefined;
  /** Base URL of the Bot API (tests point it at a local stand-in). */
  telegramApiUrl: string;
  /** Test-only fault injection: crash points of the processors and of an RFQ award, e.g. ["after-write:2"] (see lib/faults.ts). */
  faults: string[];
  logLevel: LogLevel;
  /** WebAuthn relying party: the domain passkeys are bound to (the origin's host or a parent of it). */
  webauthnRpId: string;
  /** The exact origin browsers sign passkey ceremonies on (scheme, host, port). */
  webauthnOrigin: string;
  /** Name users see in passkey prompts and as the issuer in authenticator apps. */
  webauthnRpName: string;
}

/** The embedded engine's uncompressed cache when UNCOMPRESSED_CACHE_MB is not set. */
export const DEFAULT_UNCOMPRESSED_CACHE_MB = 512;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = <T>(name: string, fallback: T, parse: (raw: string) => T): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    try {
      return parse(raw.trim());
    } catch (e) {
      problems.push(`${name}=${JSON.stringify(raw)}: ${(e as Error).message}`);
      return fallback;
    }
  };

  const config: Config = {
    host: read('HOST', '127.0.0.1', parseHost),
    // 0 picks a free port (tests).
    port: read('PORT', 8080, (raw) => parseInteger(raw, 0, 65535)),
    kafkaBrokers: read('KAFKA_BROKERS', ['127.0.0.1:9092'], parseBrokers),
    topicPrefix: read('TOPIC_PREFIX', '', parseTopicPrefix),
    redisUrl: read('REDIS_URL', 'redis://127.0.0.1:6379', (raw) => parseUrl(raw, ['redis:', 'rediss:'])),
    schemaRegistryUrl: read('SCHEMA_REGISTRY_URL', 'http://127.0.0.1:8081', parseRegistryUrl),
    clickhouseUrl: read<string | undefined>('CLICKHOUSE_URL', undefined, (raw) => parseUrl(raw, ['http:', 'https:'])),
    clickhouseDatabase: read('CLICKHOUSE_DATABASE', 'mm', parseIdentifier),
    dataDir: path.resolve(read('DATA_DIR', '.data', (raw) => raw)),
    latenessMs: read('LATENESS_SECONDS', 120, (raw) => parseInteger(raw, 0, 86_400)) * 1000,
    flushIntervalMs: read('PROCESSOR_FLUSH_MS', 1000, (raw) => parseInteger(raw, 50, 60_000)),
    uptimeCacheBytes: read('UPTIME_CACHE_MB', 256, (raw) => parseInteger(raw, 0, 65_536)) * 2 ** 20,
    uncompressedCacheBytes: read('UNCOMPRESSED_CACHE_MB', DEFAULT_UNCOMPRESSED_CACHE_MB, (raw) => parseInteger(raw, 0, 65_536)) * 2 ** 20,
    windowCacheBytes: read('WINDOW_CACHE_MB', 64, (raw) => parseInteger(raw, 0, 65_536)) * 2 ** 20,
    answerReuseMs: read('ANSWER_REUSE_MS', 1000, (raw) => parseInteger(raw, 0, 1000)),
    windowBlockMaxPairs: read('WINDOW_BLOCK_MAX_PAIRS', 50, (raw) => parseInteger(raw, 0, 1_000_000)),
    minuteRetentionDays: read('MINUTE_RETENTION_DAYS', 0, (raw) => {
      const n = parseInteger(raw, 0, 36_600);
      // The 5-minute views read 31 days of minute rows (domain/market/repositories/retention.ts).
      if (n > 0 && n < 32) throw new Error('expected 0 (keep every minute row) or at least 32 days: the 5-minute views read 31 days of minute rows');
      return n;
    }),
    telegramBotToken: read<string | undefined>('TELEGRAM_BOT_TOKEN', undefined, (raw) => (raw.trim() === '' ? undefined : raw.trim())),
    telegramApiUrl: read('TELEGRAM_API_URL', 'https://api.telegram.org', (raw) => parseUrl(raw, ['http:', 'https:']).replace(/\/+$/, '')),
    faults: read<string[]>('MM_FAULTS', [], (raw) => {
      const list = raw.split(',').map((f) => f.trim()).filter((f) => f !== '');
      for (const f of list) if (!/^((stall-)?(before-write|after-write|before-commit)|award-gap):\d+$/.test(f)) throw new Error(`"${f}" is not [stall-]<before-write|after-write|before-commit>:<n> or award-gap:<n>`);
      return list;
    }),
    logLevel: read<LogLevel>('LOG_LEVEL', 'info', (raw) => {
      if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new Error(`expected one of ${LOG_LEVELS.join(', ')}`);
      return raw as LogLevel;
    }),
    webauthnRpId: read('WEBAUTHN_RP_ID', 'localhost', parseRpId),
    webauthnOrigin: read('WEBAUTHN_ORIGIN', 'http://localhost:8080', parseOrigin),
    webauthnRpName: read('WEBAUTHN_RP_NAME', 'mm-metrics', parseDisplayName),
  };
  // The origin must lie on the RP id's domain, or every passkey ceremony would fail.
  const originHost = new URL(config.webauthnOrigin).hostname;
  if (!problems.some((p) => p.startsWith('WEBAUTHN_')) && originHost !== config.webauthnRpId && !originHost.endsWith(`.${config.webauthnRpId}`)) {
    problems.push(`WEBAUTHN_ORIGIN=${JSON.stringify(config.webauthnOrigin)}: its host must be WEBAUTHN_RP_ID ("${config.webauthnRpId}") or a subdomain of it`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function parseInteger(raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw new Error('expected a whole number');
  const n = Number(raw);
  if (n < min || n > max) throw new Error(`expected a number from ${min} to ${max}`);
  return n;
}

function parseHost(raw: string): string {
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(raw)) throw new Error('expected a host name or address');
  return raw;
}

function parseBrokers(raw: string): string[] {
  const brokers = raw.split(',').map((b) => b.trim()).filter((b) => b !== '');
  if (brokers.length === 0) throw new Error('expected host:port[,host:port...]');
  for (const b of brokers) {
    const m = /^([A-Za-z0-9.\-]+|\[[0-9a-fA-F:]+\]):(\d+)$/.exec(b);
    if (!m) throw new Error(`"${b}" is not host:port`);
    parseInteger(m[2]!, 1, 65535);
  }
  return brokers;
}

function parseUrl(raw: string, protocols: string[]): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('not a URL');
  }
  if (!protocols.includes(url.protocol)) throw new Error(`expected a ${protocols.map((p) => p.slice(0, -1)).join(' or ')} URL`);
  return raw;
}

function parseRegistryUrl(raw: string): string {
  parseUrl(raw, ['http:', 'https:']);
  const url = new URL(raw);
  if (url.search || url.hash) throw new Error('expected no query or fragment');
  return raw.replace(/\/+$/, '');
}

function parseTopicPrefix(raw: string): string {
  if (!/^[A-Za-z0-9._-]{0,100}$/.test(raw)) throw new Error('expected letters, digits, ".", "_" or "-"');
  return raw;
}

function parseIdentifier(raw: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(raw)) throw new Error('expected a plain identifier');
  return raw;
}

// A WebAuthn RP id is a bare domain: no scheme, port or path (an IP address is not allowed).
function parseRpId(input: string): string {
  const raw = input.toLowerCase();
  const label = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
  if (!new RegExp(`^${label}(?:\\.${label})*$`).test(raw) || /^[\d.]+$/.test(raw)) {
    throw new Error('expected a domain name such as example.com (no scheme, port or path)');
  }
  return raw;
}

// Browsers only run WebAuthn in a secure context: https, or http on localhost.
function parseOrigin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('not a URL');
  }
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    throw new Error('expected an origin only: scheme://host[:port], no path');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && url.hostname === 'localhost')) {
    throw new Error('expected https (http only for localhost)');
  }
  return url.origin;
}

function parseDisplayName(raw: string): string {
  if (raw.length > 64 || /[\u0000-\u001f\u007f]/.test(raw)) throw new Error('expected at most 64 printable characters');
  return raw;
}

/** Password-free form of a URL, for messages and logs. */
export function redactUrl(raw: string): string {
  const url = new URL(raw);
  if (url.password) url.password = '***';
  return url.toString();
}
