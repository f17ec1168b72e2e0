// The first step of the consumers: a message value to JSON data. Two forms are accepted
// on every topic (docs/ingest.md):
//  - Confluent-framed: byte 0, the schema's registry id (4 bytes, big-endian), then the
//    JSON. Decoded by the registry client against that schema, which it fetches once per
//    id and keeps; an unknown id or a payload that breaks its schema is a dead letter.
//  - plain JSON, from feeds that do not use the registry. A JSON text never starts with
//    byte 0, so the first byte tells the two apart.
// Framed with the id the processor's own schema got at start, the payload is only parsed:
// the processor checks every value against that same schema with its own compiled
// validator, so a framed message costs no more than a plain one. Values of other ids are
// also checked by the client against the schema of their id.
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { FRAME_HEADER_BYTES, frameOf } from '../../lib/schema-registry.ts';
import { deadLetter, ok, type Outcome } from './outcome.ts';


/** A message's data and, when it came framed, the registry id of the schema it passed. */
export interface Decoded {
  data: unknown;
  schemaId: number | undefined;
}

/** What the decoder needs of the registry client: the schemas it keeps by id, and fetching one it lacks. */
type RegistryClient = Pick<SchemaRegistry, 'cache' | 'getSchema'>;
type DecodingSchema = { fromBuffer(buffer: Buffer): unknown };

/** How long an id the registry could not give is answered from memory, so a bad producer does not send a request per message. */
const UNKNOWN_ID_MS = 60_000;
const UNREACHABLE_MS = 5_000;
const MAX_FAILED_IDS = 10_000;

export function parseJson(value: Buffer): Outcome<unknown> {
  try {
    return ok(JSON.parse(value.toString('utf8')) as unknown);
  } catch (e) {
    return deadLetter(`not JSON: ${(e as Error).message}`);
  }
}

export class ValueDecoder {
  private readonly failed = new Map<number, { reason: string; until: number }>();

  constructor(
    private readonly registry: RegistryClient,
    private readonly now: () => number = Date.now,
    /** The registry id of the reading processor's own schema, if it registered one. */
    private readonly ownSchemaId?: number,
  ) {}

  /** Synchronous for plain JSON and for ids seen before; a promise only while an id's schema is fetched. */
  decode(value: Buffer | null): Outcome<Decoded> | Promise<Outcome<Decoded>> {
    if (!value || value.length === 0) return deadLetter('empty message');
    if (value[0] !== 0) {
      const parsed = parseJson(value);
      return parsed.kind === 'ok' ? ok({ data: parsed.value, schemaId: undefined }) : parsed;
    }
    const frame = frameOf(value);
    if (!frame) return deadLetter(`framed: ${value.length} bytes, shorter than the ${FRAME_HEADER_BYTES}-byte header`);
    const id = frame.schemaId;
    if (id === this.ownSchemaId) {
      const parsed = parseJson(frame.payload);
      return parsed.kind === 'ok' ? ok({ data: parsed.value, schemaId: id }) : deadLetter(parsed.reason.replace(/^not JSON/, `not JSON (framed, schema id ${id})`));
    }
    const cached = this.registry.cache.getSchema(id);
    if (cached) return this.fromSchema(id, cached.schema, frame.payload);
    const failed = this.failed.get(id);
    if (failed && failed.until > this.now()) return deadLetter(failed.reason);
    return this.registry.getSchema(id).then(
      (schema) => this.fromSchema(id, schema, frame.payload),
      (e: unknown) => {
        const status = (e as { status?: number }).status;
        const unknown = status === 404;
        const reason = unknown
          ? `unknown schema id ${id}: the schema registry has no schema with that id`
          : `schema id ${id}: the schema registry did not give it (${(e as Error).message})`;
        // Bounded: a producer of random bytes must not grow it without end.
        if (this.failed.size >= MAX_FAILED_IDS) this.failed.clear();
        this.failed.set(id, { reason, until: this.now() + (unknown ? UNKNOWN_ID_MS : UNREACHABLE_MS) });
        return deadLetter(reason);
      },
    );
  }

  private fromSchema(id: number, schema: DecodingSchema, payload: Buffer): Outcome<Decoded> {
    try {
      return ok({ data: schema.fromBuffer(payload), schemaId: id });
    } catch (e) {
      const err = e as Error & { paths?: unknown[] };
      if (err instanceof SyntaxError) return deadLetter(`not JSON (framed, schema id ${id}): ${err.message}`);
      if (err.name === 'ConfluentSchemaRegistryValidationError') return deadLetter(`schema (id ${id}): ${describePaths(err.paths)}`);
      return deadLetter(`framed, schema id ${id}: ${err.message}`);
    }
  }
}

/** The client's validation paths ({path: [instancePath], message} with detailed paths on) in the words of describeErrors. */
function describePaths(paths: unknown[] | undefined): string {
  if (!paths || paths.length === 0) return 'invalid';
  return paths
    .slice(0, 5)
    .map((p) => {
      const { path, message } = (typeof p === 'object' && p !== null && !Array.isArray(p) ? p : { path: p }) as { path?: unknown; message?: unknown };
      const at = (Array.isArray(path) ? path.join('') : String(path ?? '')) || '(root)';
      return typeof message === 'string' ? `${at} ${message}` : `${at} is invalid`;
    })
    .join('; ');
}
