// The topics' JSON Schemas as the schema registry holds them: one self-contained document
// per topic, written in draft-07. The files in kafka/ stay the source (2020-12, compiled
// by the local validators in index.ts); registering needs two changes to them:
//  - bundled: the definitions a topic uses from `_defs.schema.json` are copied into the
//    document, so a subject is the whole contract (docs/ingest.md says why not references);
//  - draft-07: the registry's compatibility checker reads drafts 4 to 7 only (a 2020-12
//    `$schema` fails with "could not determine version", and without one it reads draft 4,
//    where a numeric `exclusiveMinimum` is an error). The files use two 2020-12 words,
//    each with an exact draft-07 twin: `$defs` (-> `definitions`) and `prefixItems`
//    (-> `items` as a list). Any other newer keyword stops the translation.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BaseTopic } from '../lib/kafka.ts';

/** Topics with a schema file: all of them. */
export const SCHEMA_TOPICS = ['md.orderbook', 'md.trades', 'md.derivatives', 'mm.orders', 'mm.fills', 'mm.reported', 'targets.events', 'loans.events', 'rfq.events', 'market.minutes'] as const satisfies readonly BaseTopic[];
export type SchemaTopic = (typeof SCHEMA_TOPICS)[number];

export const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';
const DEFS_FILE = '_defs.schema.json';
/** Keywords of 2019-09 / 2020-12 with no draft-07 meaning. */
const NEWER_KEYWORDS = new Set(['$anchor', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor', 'dependentRequired', 'dependentSchemas', 'unevaluatedItems', 'unevaluatedProperties', 'minContains', 'maxContains', '$vocabulary']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const readJson = (name: string): JsonObject =>
  JSON.parse(fs.readFileSync(fileURLToPath(new URL(`kafka/${name}`, import.meta.url)), 'utf8')) as JsonObject;

/** `_defs.schema.json#/$defs/x` or `#/$defs/x` -> the name x; undefined for any other reference. */
function defName(ref: string): string | undefined {
  const m = /^(?:_defs\.schema\.json)?#\/\$defs\/([^/]+)$/.exec(ref);
  return m?.[1];
}

/** The draft-07 form of a 2020-12 node, noting each definition it refers to in `used`. */
function toDraft07(node: Json, where: string, used: Set<string>): Json {
  if (Array.isArray(node)) return node.map((n, i) => toDraft07(n, `${where}/${i}`, used));
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    const at = `${where}/${k}`;
    if (NEWER_KEYWORDS.has(k)) throw new Error(`${at}: "${k}" has no draft-07 form; the registered schema cannot say it`);
    if (k === '$ref' && typeof v === 'string') {
      const name = defName(v);
      if (name === undefined) throw new Error(`${at}: only references to $defs are bundled, not ${v}`);
      used.add(name);
      out.$ref = `#/definitions/${name}`;
    } else if (k === '$defs') {
      out.definitions = toDraft07(v, at, used);
    } else if (k === 'prefixItems') {
      out.items = toDraft07(v, at, used);
      // 2020-12 `items` beside `prefixItems` means what draft-07 calls `additionalItems`.
      if (node.items !== undefined) out.additionalItems = toDraft07(node.items, `${where}/items`, used);
    } else if (k === 'items' && node.prefixItems !== undefined) {
      continue;
    } else {
      out[k] = toDraft07(v, at, used);
    }
  }
  return out;
}

/** The registered form of a topic's schema, as JSON text (the same text every time, so a restart registers no new version). */
export function bundledSchema(topic: SchemaTopic): string {
  const shared = readJson(DEFS_FILE).$defs as JsonObject;
  const used = new Set<string>();
  const body = toDraft07(readJson(`${topic}.schema.json`), topic, used) as JsonObject;
  if (body.definitions !== undefined) throw new Error(`${topic}: a schema file of its own $defs is not bundled yet`);
  // The shared definitions used, and those they use in turn.
  const definitions: JsonObject = {};
  const queue = [...used];
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    const def = shared[name];
    if (def === undefined) throw new Error(`${topic}: no definition "${name}" in ${DEFS_FILE}`);
    const before = new Set(used);
    definitions[name] = toDraft07(def, `${DEFS_FILE}#/$defs/${name}`, used);
    for (const next of used) if (!before.has(next)) queue.push(next);
  }
  const sorted = Object.fromEntries(Object.keys(definitions).sort().map((k) => [k, definitions[k]!]));
  return JSON.stringify({ $schema: DRAFT_07, ...body, definitions: sorted });
}
