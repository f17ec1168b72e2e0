// The contract: api/openapi.yaml is the one source of every route's method, path, security
// and input rules. Routes are mounted from it by operationId; each request's query string
// and body are checked against the operation's schemas (compiled with ajv) before its
// handler runs, and tests hold every answer to the operation's response schemas.
//
// Query strings and form bodies carry text: a value is turned into the type its schema
// names only when it is written plainly (an integer or a decimal as a person writes it,
// `true`/`false`/`1`/`0`), so `0x10`, `1e309`, `Infinity` or ` 10` stay text and are refused
// by name. A JSON body is taken as it is: a number there is a JSON number.
import type Router from '@koa/router';
import type { ValidateFunction } from 'ajv';
import type { Context, Middleware } from 'koa';
import fs from 'node:fs';
import { parse } from 'yaml';
import { createAjv } from '../../schemas/index.ts';
import type { operations } from '../client/schema.ts';
import { authenticate, type ApiKeyScope } from './auth.ts';
import { requestBody } from './body.ts';
import type { ApiDeps } from '../deps.ts';
import { badRequest, notFound, unsupportedMediaType, type FieldErrors } from './errors.ts';
import { itemErrors, toFieldErrors } from './validate.ts';

export type OperationId = keyof operations;
/**
 * An operation's handler with a check of whether the caller may use the operation at all,
 * run before its body is read and checked: a caller whose account may not use an endpoint
 * gets 403 whatever it sent (specification 5.4), not the body's 400.
 */
export interface Guarded {
  guard: Middleware;
  handle: Middleware | Middleware[];
}
/** The handler (or handlers, in order) of each operation, guarded or not. */
export type Handlers = Partial<Record<OperationId, Middleware | Middleware[] | Guarded>>;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const METHODS: readonly Method[] = ['get', 'post', 'put', 'patch', 'delete'];

/** The query string of an operation once checked, as its schema types it. */
export type QueryOf<Op extends OperationId> = operations[Op] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** The JSON body of an operation once checked. */
export type BodyOf<Op extends OperationId> = operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}
interface OperationObject {
  operationId: string;
  'x-item-errors'?: boolean;
  security?: Record<string, string[]>[];
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema?: Schema }> }>;
}
interface Document {
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, OperationObject> & { parameters?: Parameter[] }>;
  components: { parameters?: Record<string, Parameter>; responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> };
}

export interface Operation {
  id: OperationId;
  method: Method;
  /** As the document writes it: `/v2/organizations/loans/{id}/`. */
  path: string;
  /** As the router writes it: `/v2/organizations/loans/:id/`. */
  routerPath: string;
  /** Matches the request paths of the operation. */
  pathPattern: RegExp;
  security: Record<string, string[]>[];
  queryParameters: Map<string, Schema>;
  /** The same schemas with their references pointed at the compiled document. */
  queryInline: Map<string, Schema>;
  pathParameters: Map<string, Schema>;
  validateQuery: ValidateFunction;
  validatePath: ValidateFunction;
  bodyRequired: boolean;
  /** A list body whose errors are answered as a list with one object per item. */
  itemErrors: boolean;
  bodies: Map<string, ValidateFunction>;
  bodySchemas: Map<string, Schema>;
  responses: Map<string, Map<string, ValidateFunction>>;
}

const DOCUMENT_ID = 'openapi.json';
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export const DOCUMENT_URL = new URL('../openapi.yaml', import.meta.url);

export class Contract {
  readonly operations = new Map<OperationId, Operation>();
  readonly text: string;
  private readonly doc: Document;
  private readonly ajv: ReturnType<typeof createAjv>;

  constructor(text: string = fs.readFileSync(DOCUMENT_URL, 'utf8')) {
    this.text = text;
    this.doc = parse(text) as Document;
    // OpenAPI's own words (`example`, `discriminator`, ...) are not JSON Schema keywords.
    const ajv = createAjv({ strict: false, verbose: true });
    this.ajv = ajv;
    ajv.addSchema(this.doc as object, DOCUMENT_ID);
    const ref = (...parts: string[]) => ({ $ref: `${DOCUMENT_ID}#/${pointer(...parts)}` });
    for (const [path, item] of Object.entries(this.doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const id = op.operationId as OperationId;
        const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => this.resolveParameter(p));
        const objectOf = (where: Parameter['in']) => {
          const list = params.filter((p) => p.in === where);
          return {
            map: new Map(list.map((p) => [p.name, this.deref(p.schema ?? {})])),
            inline: new Map(list.map((p) => [p.name, this.inline(p.schema ?? {})])),
            schema: {
              type: 'object',
              properties: Object.fromEntries(list.map((p) => [p.name, this.inline(p.schema ?? {})])),
              required: list.filter((p) => p.required).map((p) => p.name),
            },
          };
        };
        const query = objectOf('query');
        const pathParams = objectOf('path');
        const bodies = new Map<string, ValidateFunction>();
        const bodySchemas = new Map<string, Schema>();
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
          if (!media.schema) continue;
          bodies.set(type, ajv.compile(ref('paths', path, method, 'requestBody', 'content', type, 'schema')));
          bodySchemas.set(type, this.deref(media.schema));
        }
        const responses = new Map<string, Map<string, ValidateFunction>>();
        for (const [status, response] of Object.entries(op.responses)) {
          const byType = new Map<string, ValidateFunction>();
          const base = response.$ref ? response.$ref.replace(/^#\//, '').split('/') : ['paths', path, method, 'responses', status];
          const content = response.$ref ? this.doc.components.responses?.[base[2]!]?.content : response.content;
          for (const [type, media] of Object.entries(content ?? {})) {
            if (media.schema) byType.set(type, ajv.compile(ref(...base, 'content', type, 'schema')));
          }
          responses.set(status, byType);
        }
        this.operations.set(id, {
          id,
          method,
          path,
          routerPath: path.replace(/\{(\w+)\}/g, ':$1'),
          pathPattern: new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
          security: op.security ?? this.doc.security ?? [],
          queryParameters: query.map,
          queryInline: query.inline,
          pathParameters: pathParams.map,
          validateQuery: ajv.compile(query.schema),
          validatePath: ajv.compile(pathParams.schema),
          bodyRequired: op.requestBody?.required === true,
          itemErrors: op['x-item-errors'] === true,
          bodies,
          bodySchemas,
          responses,
        });
      }
    }
  }

  /**
   * A check of parameters given as text or as JSON values (a market endpoint's query string
   * or body, made one shape), against the query parameters of the operations named (the
   * first naming a parameter gives its schema): plainly written text becomes the declared
   * type, in place, then ajv judges the whole. For the handlers that take either form.
   */
  parameterCheck(ids: readonly OperationId[]): ValidateFunction {
    const schemas = new Map<string, Schema>();
    const inlined = new Map<string, Schema>();
    for (const id of ids) {
      const op = this.operation(id);
      for (const [name, schema] of op.queryParameters) {
        if (schemas.has(name)) continue;
        schemas.set(name, schema);
        inlined.set(name, op.queryInline.get(name)!);
      }
    }
    const validate = this.ajv.compile({ type: 'object', properties: Object.fromEntries(inlined) });
    const check = ((params: Record<string, unknown>) => {
      for (const [name, value] of Object.entries(params)) {
        const schema = schemas.get(name);
        if (!schema) continue;
        const items = (schema.items as Schema | undefined) ?? {};
        if (Array.isArray(value)) params[name] = value.map((v) => (typeof v === 'string' ? fromText(v, items) : v));
        else if (typeof value === 'string') params[name] = fromText(value, schema);
      }
      const ok = validate(params);
      check.errors = validate.errors;
      return ok;
    }) as unknown as ValidateFunction;
    return check;
  }

  operation(id: OperationId): Operation {
    const op = this.operations.get(id);
    if (!op) throw new Error(`api/openapi.yaml has no operation "${id}"`);
    return op;
  }

  /**
   * Mounts every operation of the document on the router: its authentication (from its
   * `security`), the check of its input, then its handler. An operation without a handler,
   * or a handler without an operation, stops the start.
   */
  mount(router: Router, deps: ApiDeps, handlers: Handlers): void {
    for (const id of Object.keys(handlers)) if (!this.operations.has(id as OperationId)) throw new Error(`a handler for "${id}", which api/openapi.yaml does not have`);
    for (const op of this.operations.values()) {
      const handler = handlers[op.id];
      if (!handler) throw new Error(`api/openapi.yaml's "${op.id}" (${op.method.toUpperCase()} ${op.path}) has no handler`);
      const auth = authenticationOf(deps, op.security);
      const { guard, handle } = typeof handler === 'object' && !Array.isArray(handler) ? handler : { guard: undefined, handle: handler };
      const chain: Middleware[] = [...(auth ? [auth] : []), ...(guard ? [guard] : []), requestBody, validateInput(op), ...(Array.isArray(handle) ? handle : [handle])];
      router.register(op.routerPath, [op.method.toUpperCase()], chain, { name: op.id });
    }
  }

  /** The operation a request's method and path name, if any. */
  operationOf(method: string, path: string): Operation | undefined {
    const m = method.toLowerCase();
    for (const op of this.operations.values()) if (op.method === m && op.pathPattern.test(path)) return op;
    return undefined;
  }

  /**
   * The errors of an answer against its response schema, or none. The answers every
   * operation may give beyond its own (405, 413, 415, 429, 431) are `{detail}`.
   */
  responseErrors(id: OperationId, status: number, contentType: string, body: unknown): string[] {
    const op = this.operation(id);
    const byType = op.responses.get(String(status)) ?? op.responses.get(`${String(status)[0]}XX`) ?? op.responses.get('default');
    if (!byType && GENERIC_STATUSES.has(status)) {
      const detail = body !== null && typeof body === 'object' && typeof (body as { detail?: unknown }).detail === 'string' && Object.keys(body).length === 1;
      return detail ? [] : [`status ${status} must answer {detail}`];
    }
    if (!byType) return [`status ${status} is not documented`];
    const type = contentType.split(';')[0]!.trim();
    if (byType.size === 0) return body === undefined || body === '' ? [] : [`status ${status} is documented without a body, but has one (${type})`];
    const validate = byType.get(type);
    if (!validate) return [`${type} is not documented for status ${status}`];
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
  }

  private resolveParameter(p: Parameter | { $ref: string }): Parameter {
    if (!('$ref' in p)) return p;
    const name = p.$ref.replace('#/components/parameters/', '');
    const found = this.doc.components.parameters?.[name];
    if (!found) throw new Error(`api/openapi.yaml: no parameter ${p.$ref}`);
    return found;
  }

  /** A parameter's schema with its references pointed at the document (for the object schema built around them). */
  private inline(schema: Schema): Schema {
    return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, `"$ref":"${DOCUMENT_ID}#/`)) as Schema;
  }

  /**
   * A schema with its references followed where text is typed by them: itself, its items,
   * its properties and its choices (for turning query and form text into the declared type).
   */
  private deref(schema: Schema, depth = 0): Schema {
    let s = schema;
    for (let i = 0; i < 10 && typeof s.$ref === 'string'; i++) {
      const parts = (s.$ref as string).replace(/^#\//, '').split('/');
      s = parts.reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], this.doc) as Schema;
    }
    if (depth > 3) return s;
    const out: Schema = { ...s };
    if (s.items && typeof s.items === 'object') out.items = this.deref(s.items as Schema, depth + 1);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) if (Array.isArray(s[key])) out[key] = (s[key] as Schema[]).map((x) => this.deref(x, depth + 1));
    if (s.properties && typeof s.properties === 'object') out.properties = Object.fromEntries(Object.entries(s.properties as Record<string, Schema>).map(([k, v]) => [k, this.deref(v, depth + 1)]));
    return out;
  }
}

const GENERIC_STATUSES = new Set([405, 413, 415, 429, 431]);

function authenticationOf(deps: ApiDeps, security: Record<string, string[]>[]): Middleware | undefined {
  if (security.length === 0) return undefined;
  const schemes = new Set(security.flatMap((r) => Object.keys(r)));
  const scopes = security.flatMap((r) => r.apiKey ?? []) as ApiKeyScope[];
  return authenticate(deps, { allowOpsToken: schemes.has('opsToken'), apiKeyScope: schemes.has('apiKey') ? scopes : undefined });
}

// Written as people write numbers: no sign but "-", no leading zeros, no exponent, no hex.
const INTEGER = /^-?(0|[1-9]\d*)$/;
const DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;

const typesOf = (schema: Schema): string[] => {
  const t = schema.type;
  if (Array.isArray(t)) return t as string[];
  if (typeof t === 'string') return [t];
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) if (Array.isArray(schema[key])) return (schema[key] as Schema[]).flatMap(typesOf);
  return [];
};

/** One text value as the schema's type, when it is written plainly; otherwise the text, for ajv to refuse. */
export function fromText(text: string, schema: Schema): unknown {
  const types = typesOf(schema);
  if (types.includes('string')) return text;
  if (types.includes('integer') && INTEGER.test(text) && Number.isSafeInteger(Number(text))) return Number(text);
  if (types.includes('number') && DECIMAL.test(text) && Number.isFinite(Number(text))) return Number(text);
  if (types.includes('boolean')) {
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
  }
  if ((types.includes('array') || types.includes('object')) && /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/**
 * A query string (or form) as the schemas type it: a list is its comma-separated parts (or
 * its repeated keys), an empty value is the parameter left out, a repeated scalar stays a
 * list for ajv to refuse.
 */
export function typedFields(raw: Record<string, unknown>, schemas: Map<string, Schema>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    const schema = schemas.get(name);
    // A flag given without a value (`?include_facets`) is set.
    if (value === '' && schema && typesOf(schema).includes('boolean')) {
      out[name] = true;
      continue;
    }
    if (value === undefined || value === '') continue;
    if (!schema) {
      out[name] = value;
      continue;
    }
    const values = (Array.isArray(value) ? value : [value]).map(String);
    const types = typesOf(schema);
    if (types.includes('array') && !(values.length === 1 && /^\s*\[/.test(values[0]!))) {
      const items = (schema.items as Schema | undefined) ?? {};
      // Spaces around an item are no part of it (`bps=1, 10`), as in a JSON body's comma-separated string.
      const parts = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
      if (parts.length > 0) out[name] = parts.map((p) => fromText(p, items));
      continue;
    }
    const unique = [...new Set(values)];
    out[name] = unique.length === 1 ? fromText(unique[0]!, schema) : unique;
  }
  return out;
}

const FORM_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data']);

/** Checks the path, query and body of a request against the operation; the typed values go to ctx.state. */
function validateInput(op: Operation): Middleware {
  return async (ctx, next) => {
    const pathValues = typedFields(ctx.params ?? {}, op.pathParameters);
    // A path id that is not a plain number names nothing: the resource does not exist.
    if (!op.validatePath(pathValues)) throw notFound();
    const query = typedFields(ctx.query as Record<string, unknown>, op.queryParameters);
    // A list in a query string is one field: its items' problems are the field's.
    const queryErrors = op.validateQuery(query) ? [] : (op.validateQuery.errors ?? []).map((e) => ({ ...e, instancePath: e.instancePath.split('/').slice(0, 2).join('/') }));
    const fields: FieldErrors = toFieldErrors(queryErrors);
    ctx.state.query = query;
    ctx.state.params = pathValues;
    if (op.bodies.size > 0) {
      const body = bodyOf(ctx, op);
      const validate = op.bodies.get(body.type)!;
      if (!validate(body.value)) {
        if (op.itemErrors && queryErrors.length === 0) throw itemErrors(body.value, validate.errors ?? []);
        Object.assign(fields, toFieldErrors(validate.errors ?? [], body.value));
      }
      ctx.state.body = body.value;
    }
    if (Object.keys(fields).length > 0) throw badRequest(fields);
    await next();
  };
}

function bodyOf(ctx: Context, op: Operation): { type: string; value: unknown } {
  // No body at all reads as an empty JSON object, so its required fields are named.
  const type = ctx.request.type === '' && op.bodies.has('application/json') ? 'application/json' : ctx.request.type;
  if (!op.bodies.has(type)) throw unsupportedMediaType(type);
  const raw: unknown = ctx.request.body;
  if (!FORM_TYPES.has(type)) return { type, value: raw ?? {} };
  const schema = op.bodySchemas.get(type) ?? {};
  const properties = new Map(Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {}));
  return { type, value: typedFields((raw as Record<string, unknown> | undefined) ?? {}, properties) };
}

/** A path id (`id`, `pid`) as the contract checked it: a positive integer (anything else was a 404 already). */
export function pathId(ctx: Context, name: 'id' | 'pid' = 'id'): number {
  const v = ctx.state.params?.[name];
  if (typeof v !== 'number') throw notFound();
  return v;
}

declare module 'koa' {
  interface DefaultState {
    params?: Record<string, unknown>;
  }
}
