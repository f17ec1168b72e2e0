// Input validation with ajv, reported in the specification's 400 shape: an object of
// field name to a list of messages, nested for nested fields. Messages follow the wording
// clients of this API already know ("This field is required.").
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Middleware } from 'koa';
import { createAjv } from '../../schemas/index.ts';
import { badRequest, MESSAGES, type FieldErrors } from './errors.ts';

// Form and query values arrive as strings: coerce them, and drop fields nobody asked for.
const formAjv = createAjv({ coerceTypes: 'array', removeAdditional: true, useDefaults: true });

export function compile<T>(schema: object): ValidateFunction<T> {
  return formAjv.compile<T>(schema);
}

function messageFor(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return MESSAGES.required;
    case 'type':
      switch (p.type) {
        case 'string':
          return 'Not a valid string.';
        case 'boolean':
          return 'Must be a valid boolean.';
        case 'integer':
          return 'A valid integer is required.';
        case 'number':
          return 'A valid number is required.';
        case 'array':
          return 'Expected a list of items.';
        case 'object':
          return 'Expected an object.';
        default:
          return `Expected ${String(p.type)}.`;
      }
    case 'minLength':
      return p.limit === 1 ? 'This field may not be blank.' : `Ensure this field has at least ${String(p.limit)} characters.`;
    case 'maxLength':
      return `Ensure this field has no more than ${String(p.limit)} characters.`;
    case 'minItems':
      return p.limit === 1 ? 'This list may not be empty.' : `Ensure this field has at least ${String(p.limit)} elements.`;
    case 'maxItems':
      return `Ensure this field has no more than ${String(p.limit)} elements.`;
    case 'minimum':
      return `Ensure this value is greater than or equal to ${String(p.limit)}.`;
    case 'maximum':
      return `Ensure this value is less than or equal to ${String(p.limit)}.`;
    case 'enum':
      return `Not a valid choice; expected one of: ${(p.allowedValues as unknown[]).join(', ')}.`;
    case 'format':
      return p.format === 'email' ? 'Enter a valid email address.' : `Enter a valid ${String(p.format)}.`;
    case 'pattern':
      return 'This value does not have the expected form.';
    case 'uniqueItems':
      return 'Items must be unique.';
    default:
      return e.message ? `${e.message[0]!.toUpperCase()}${e.message.slice(1)}.` : 'Invalid value.';
  }
}

/** ajv errors -> `{field: [messages]}`, nesting `a/0/b` as `{a: {0: {b: [...]}}}`. */
export function toFieldErrors(errors: ErrorObject[]): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errors) {
    // anyOf/oneOf wrappers repeat what their branches said.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const path = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (e.keyword === 'required') path.push(String((e.params as { missingProperty: string }).missingProperty));
    if (path.length === 0) path.push('non_field_errors');
    let node: FieldErrors = out;
    for (const part of path.slice(0, -1)) {
      const next = node[part];
      if (next === undefined || Array.isArray(next) || typeof next === 'string') node[part] = {};
      node = node[part] as FieldErrors;
    }
    const leaf = path[path.length - 1]!;
    const list = Array.isArray(node[leaf]) ? (node[leaf] as string[]) : [];
    const msg = messageFor(e);
    if (!list.includes(msg)) list.push(msg);
    node[leaf] = list;
  }
  return out;
}

export type Validated<T> = { body: T };

/** Validates (and coerces) the request body into ctx.state.body. */
export function validateBody<T>(validate: ValidateFunction<T>): Middleware {
  return async (ctx, next) => {
    const raw = ctx.request.body;
    const body = raw && typeof raw === 'object' && !Array.isArray(raw) ? { ...(raw as object) } : raw ?? {};
    if (!validate(body)) throw badRequest(toFieldErrors(validate.errors ?? []));
    ctx.state.body = body;
    await next();
  };
}

/** Validates (and coerces) the query string into ctx.state.query. */
export function validateQuery<T>(validate: ValidateFunction<T>): Middleware {
  return async (ctx, next) => {
    const query = { ...ctx.query };
    if (!validate(query)) throw badRequest(toFieldErrors(validate.errors ?? []));
    ctx.state.query = query;
    await next();
  };
}
