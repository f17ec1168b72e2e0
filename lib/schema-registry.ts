// The schema registry: a client of its Confluent-compatible API (@kafkajs/confluent-schema-registry)
// and Confluent's framing of values. The topics' subjects and their registration at start
// are the contracts' (schemas/registration.ts). The registry the project runs is Apicurio
// Registry (ops/schema-registry.ts); any registry serving the Confluent API works,
// Confluent's own included.
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { Config } from './config.ts';

/** Confluent framing: byte 0, the schema's registry id (big-endian int32), then the payload. */
export const FRAME_HEADER_BYTES = 5;

/** The frame header of a schema id, for producers that write the payload themselves. */
export function frameHeader(schemaId: number): Buffer {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.writeInt32BE(schemaId, 1);
  return header;
}

/** The schema id and payload of a framed value; undefined for any other value. */
export function frameOf(value: Buffer | null): { schemaId: number; payload: Buffer } | undefined {
  if (!value || value.length < FRAME_HEADER_BYTES || value[0] !== 0) return undefined;
  return { schemaId: value.readInt32BE(1), payload: value.subarray(FRAME_HEADER_BYTES) };
}

/** Where Apicurio serves the Confluent API; Confluent's registry serves it at its root. */
export const APICURIO_CCOMPAT_PATH = '/apis/ccompat/v7';
const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';

export interface Registry {
  /** Encodes and decodes framed messages; keeps every schema it saw by id. */
  client: SchemaRegistry;
  /** Base URL of the Confluent-compatible API (no credentials). */
  api: string;
  /** Headers of the calls made here beside the client (credentials of the URL, if any). */
  headers: Record<string, string>;
}

/** A URL's credentials as a Basic header and the URL without them (fetch refuses URLs that carry them). */
function splitCredentials(raw: string): { url: string; auth: { username: string; password: string } | undefined } {
  const u = new URL(raw);
  const auth = u.username ? { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) } : undefined;
  u.username = '';
  u.password = '';
  return { url: u.toString().replace(/\/+$/, ''), auth };
}

function authHeaders(auth: { username: string; password: string } | undefined): Record<string, string> {
  return auth ? { Authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` } : {};
}

/**
 * The Confluent API's base URL for SCHEMA_REGISTRY_URL, or undefined when nothing answers
 * there. A URL with a path is that base; a bare address is tried as Apicurio
 * (`/apis/ccompat/v7`), then as Confluent's registry (the root).
 */
export async function findConfluentApi(raw: string, timeoutMs = 2000): Promise<string | undefined> {
  const { url, auth } = splitCredentials(raw);
  const bare = new URL(url).pathname.replace(/\/+$/, '') === '';
  for (const base of bare ? [url + APICURIO_CCOMPAT_PATH, url] : [url]) {
    try {
      const r = await fetch(`${base}/subjects`, { headers: authHeaders(auth), signal: AbortSignal.timeout(timeoutMs) });
      if (r.ok && Array.isArray(await r.json())) return base;
    } catch {
      // nothing there, or not the Confluent API
    }
  }
  return undefined;
}

export async function openSchemaRegistry(config: Pick<Config, 'schemaRegistryUrl'>, clientId: string): Promise<Registry> {
  const { auth } = splitCredentials(config.schemaRegistryUrl);
  const api = await findConfluentApi(config.schemaRegistryUrl);
  if (!api) throw new Error(`no schema registry answers at ${splitCredentials(config.schemaRegistryUrl).url} (SCHEMA_REGISTRY_URL)`);
  const client = new SchemaRegistry(
    { host: api, clientId, ...(auth ? { auth } : {}) },
    {
      // The registered schemas are draft-07 (schemas/topic-schemas.ts): the client compiles
      // each with a new draft-07 ajv. Not strict: a schema another writer registered may
      // carry keywords ajv does not know, and the processors check their own schema after it.
      [SchemaType.JSON]: { allErrors: true, allowUnionTypes: true, strict: false, detailedErrorPaths: true },
    },
  );
  return { client, api, headers: authHeaders(auth) };
}

/** A call of the Confluent API beside the client (config, subjects), with the registry's credentials. */
export async function registryRequest(registry: Registry, method: string, path: string, body?: unknown): Promise<{ status: number; data: unknown }> {
  const r = await fetch(`${registry.api}${path}`, {
    method,
    headers: { ...registry.headers, ...(body === undefined ? {} : { 'Content-Type': CONTENT_TYPE }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await r.text();
  let data: unknown = text;
  try {
    data = JSON.parse(text);
  } catch {
    // an error page
  }
  return { status: r.status, data };
}

/**
 * The registry's 409 answer in words that name the fields. Apicurio lists its findings as
 * `DIFF_TYPE at /properties/a/[ref ...]/maxLength`; a required field added or a new
 * property shows only as `/required` or `/propertySchemasAdded`, so those names come from
 * comparing the two schemas. Another registry's wording is kept when nothing is recognised.
 */
export function describeIncompatibility(message: string, registered: string | undefined, proposed: string): string[] {
  const list = /list of diff types: \[(.*)\]/s.exec(message)?.[1];
  if (!list) return [];
  let before: { required?: string[]; properties?: Record<string, unknown> } = {};
  let after: { required?: string[]; properties?: Record<string, unknown> } = {};
  try {
    before = registered ? (JSON.parse(registered) as typeof before) : {};
    after = JSON.parse(proposed) as typeof after;
  } catch {
    // names from the paths only
  }
  const out: string[] = [];
  for (const item of list.split(/,\s*(?=[A-Z_]+ at )/)) {
    const m = /^([A-Z_]+) at (\S.*)$/.exec(item.trim());
    if (!m) {
      out.push(item.trim());
      continue;
    }
    const [, kind, path] = m as unknown as [string, string, string];
    const fields = [...path.matchAll(/(?:^|\/)properties\/([^/[\]]+)/g)].map((x) => x[1]!);
    const field = [...new Set(fields)].join('.');
    if (path === '/required') {
      const added = (after.required ?? []).filter((f) => !(before.required ?? []).includes(f));
      out.push(added.length > 0 ? `${added.map((f) => `field "${f}"`).join(', ')} became required (${kind})` : `a field became required (${kind})`);
    } else if (path === '/propertySchemasAdded') {
      const added = Object.keys(after.properties ?? {}).filter((f) => !(f in (before.properties ?? {})));
      out.push(added.length > 0 ? `${added.map((f) => `field "${f}"`).join(', ')} added, which old messages may hold with any value (${kind})` : `a field was added (${kind})`);
    } else {
      out.push(`${field ? `field "${field}"` : 'the message'}: ${kind.toLowerCase().replace(/_type_/, ' ').replace(/_/g, ' ')} (${kind} at ${path})`);
    }
  }
  return out;
}
