// The topics' schemas in the schema registry: each topic's subject, the registration of
// their registered form (topic-schemas.ts) at start with BACKWARD compatibility, the ids
// producers frame with, and a benchmark's clean-up. The client is lib/schema-registry.ts.
import { COMPATIBILITY, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { Config } from '../lib/config.ts';
import { topicName } from '../lib/kafka.ts';
import type { Logger } from '../lib/log.ts';
import { describeIncompatibility, registryRequest, type Registry } from '../lib/schema-registry.ts';
import { bundledSchema, SCHEMA_TOPICS, type SchemaTopic } from './topic-schemas.ts';

/** The subject of a topic's values: the topic's full name, prefix included, and `-value` (Confluent's TopicNameStrategy). */
export function subjectOf(config: Pick<Config, 'topicPrefix'>, topic: SchemaTopic): string {
  return `${topicName(config, topic)}-value`;
}

/** A schema the registry refused: names the topic and what changed. */
export class IncompatibleSchemaError extends Error {
  constructor(
    readonly topic: string,
    readonly subject: string,
    readonly changes: string[],
    readonly registryMessage: string,
  ) {
    super(
      `the schema registry refused the schema of ${topic} (subject ${subject}) as not BACKWARD compatible with the version registered there: ` +
        `${changes.length > 0 ? changes.join('; ') : registryMessage}. ` +
        'Messages already in the topic must still pass the new schema: widen, do not narrow; a new optional field needs a new topic or a compatibility change by an operator (docs/ingest.md)',
    );
    this.name = 'IncompatibleSchemaError';
  }
}

/**
 * Registers each topic's schema as `<topic>-value` (JSON Schema) with BACKWARD
 * compatibility, in a fixed order. The same schema again is no new version; a schema the
 * registry refuses throws an IncompatibleSchemaError naming the topic and the fields.
 * Returns the registry id of each topic's schema.
 */
export async function registerTopicSchemas(
  registry: Registry,
  config: Pick<Config, 'topicPrefix'>,
  log: Logger,
  schemas: ReadonlyMap<SchemaTopic, string> = new Map(SCHEMA_TOPICS.map((t) => [t, bundledSchema(t)])),
): Promise<Map<SchemaTopic, number>> {
  const ids = new Map<SchemaTopic, number>();
  for (const [topic, schema] of schemas) {
    const subject = subjectOf(config, topic);
    const path = `/config/${encodeURIComponent(subject)}`;
    // Set before the first version too (the registry keeps it for the subject to come):
    // the client then finds the level it expects and leaves it alone.
    const set = await registryRequest(registry, 'PUT', path, { compatibility: COMPATIBILITY.BACKWARD });
    if (set.status !== 200) throw new Error(`the schema registry did not set BACKWARD on ${subject} (${set.status}: ${JSON.stringify(set.data)})`);
    try {
      const { id } = await registry.client.register({ type: SchemaType.JSON, schema }, { subject, compatibility: COMPATIBILITY.BACKWARD });
      ids.set(topic, id);
    } catch (e) {
      if ((e as { status?: number }).status !== 409) throw e;
      const latest = await registryRequest(registry, 'GET', `/subjects/${encodeURIComponent(subject)}/versions/latest`);
      const registered = (latest.data as { schema?: string }).schema;
      const message = (e as Error).message.replace(/^[^-]*- /, '');
      throw new IncompatibleSchemaError(topic, subject, describeIncompatibility(message, registered, schema), message);
    }
  }
  log.info('topic schemas registered', { subjects: ids.size, ids: Object.fromEntries(ids) });
  return ids;
}

/**
 * The id of the schema this code writes to a topic, for producers: the version registered
 * under `subject` equal to the local schema. A schema not registered there fails with what to do.
 */
export async function registeredSchemaId(registry: Registry, topic: SchemaTopic, subject: string): Promise<number> {
  try {
    return await registry.client.getRegistryIdBySchema(subject, { type: SchemaType.JSON, schema: bundledSchema(topic) });
  } catch (e) {
    throw new Error(
      `the schema of ${topic} is not registered as ${subject} at ${registry.api} (${(e as Error).message}): the service registers the topics' schemas when it starts (npm start)`,
    );
  }
}

/** registeredSchemaId for each of `topics`, under the subjects of `config`'s prefix. */
export async function topicSchemaIds<T extends SchemaTopic>(registry: Registry, config: Pick<Config, 'topicPrefix'>, topics: readonly T[]): Promise<Map<T, number>> {
  const ids = new Map<T, number>();
  for (const topic of topics) ids.set(topic, await registeredSchemaId(registry, topic, subjectOf(config, topic)));
  return ids;
}

/** Deletes the subjects of a prefix's topics (a benchmark's own, when it is done): soft, then for good, as the Confluent API wants. */
export async function deleteSubjects(registry: Registry, config: Pick<Config, 'topicPrefix'>): Promise<void> {
  const existing = await registryRequest(registry, 'GET', '/subjects');
  const names = new Set(Array.isArray(existing.data) ? (existing.data as string[]) : []);
  for (const topic of SCHEMA_TOPICS) {
    const subject = subjectOf(config, topic);
    if (!names.has(subject)) continue;
    await registryRequest(registry, 'DELETE', `/subjects/${encodeURIComponent(subject)}`);
    await registryRequest(registry, 'DELETE', `/subjects/${encodeURIComponent(subject)}?permanent=true`);
  }
}
