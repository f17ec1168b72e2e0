// ajv's findings, reported in the specification's 400 shape: an object of field name to a
// list of messages, nested for nested fields. Messages follow the wording clients of this
// API already know ("This field is required."); a schema may give its own (`x-error`).
import type { ErrorObject } from 'ajv';
import { HttpError, messageError, MESSAGES, type FieldErrors } from './errors.ts';

function messageFor(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'required') return MESSAGES.required;
  if (e.keyword === 'additionalProperties') return 'This field is not accepted here (unknown or read-only).';
  const own = ownMessage(e);
  if (own) {
    const shown = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    // A value of the wrong type fails the enum too: its choices are the schema's either way.
    const choices = Array.isArray(p.allowedValues) ? p.allowedValues : (e.parentSchema as { enum?: unknown[] } | undefined)?.enum;
    return own.replace('{value}', shown).replace('{choices}', Array.isArray(choices) ? choices.join(', ') : '');
  }
  switch (e.keyword) {
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
    case 'const':
      return `Must be ${JSON.stringify(p.allowedValue)}.`;
    case 'exclusiveMinimum':
      return `Ensure this value is greater than ${String(p.limit)}.`;
    case 'exclusiveMaximum':
      return `Ensure this value is less than ${String(p.limit)}.`;
    case 'anyOf':
    case 'oneOf':
      return 'Not a valid value.';
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

/** A schema's own words for any of its failures (`x-error` in api/openapi.yaml; `{value}` is the value refused, `{choices}` an enum's values). */
const ownMessage = (e: ErrorObject): string | undefined => {
  const schema = e.parentSchema as Record<string, unknown> | undefined;
  return typeof schema?.['x-error'] === 'string' ? schema['x-error'] : undefined;
};

/**
 * ajv errors -> `{field: [messages]}`, nesting `a/0/b` as `{a: {0: {b: [...]}}}`. Where a
 * choice (`anyOf`/`oneOf`) failed, its one message stands for what its branches said.
 */
export function toFieldErrors(errors: ErrorObject[], root?: unknown): FieldErrors {
  const out: FieldErrors = {};
  const choices = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  // A branch's errors sit at the choice's value or inside it (their schema paths may lie in a referenced schema).
  const insideChoice = (e: ErrorObject) => choices.some((c) => c !== e && (e.instancePath === c.instancePath || e.instancePath.startsWith(`${c.instancePath}/`)));
  // A value of the wrong type is refused for that alone, not also for what its type would have allowed.
  const mistyped = new Set(errors.filter((e) => e.keyword === 'type' && !insideChoice(e)).map((e) => e.instancePath));
  for (const e of errors) {
    if (e.keyword === 'if' || insideChoice(e)) continue;
    if (e.keyword !== 'type' && mistyped.has(e.instancePath)) continue;
    const path = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (e.keyword === 'required') path.push(String((e.params as { missingProperty: string }).missingProperty));
    if (e.keyword === 'additionalProperties') path.push(String((e.params as { additionalProperty: string }).additionalProperty));
    if (e.keyword === 'unevaluatedProperties') path.push(String((e.params as { unevaluatedProperty: string }).unevaluatedProperty));
    if (path.length === 0) path.push('non_field_errors');
    // A list's items answer as a list with one object per item (`{}` for a valid one).
    // An item of a list of plain values is the list's problem: `{models: [message]}`.
    for (let i = 1, value: unknown = root; i < path.length && value !== undefined; i++) {
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[path[i - 1]!] : undefined;
      const item = Array.isArray(value) ? (value as unknown[])[Number(path[i])] : undefined;
      if (Array.isArray(value) && /^\d+$/.test(path[i]!) && (item === null || typeof item !== 'object' || Array.isArray(item))) {
        path.length = i;
        break;
      }
    }
    let node: FieldErrors | FieldErrors[] = out;
    let value: unknown = root;
    for (const part of path.slice(0, -1)) {
      const child: unknown = Array.isArray(value) || (value !== null && typeof value === 'object') ? (value as Record<string, unknown>)[part] : undefined;
      const holder = node as Record<string, FieldErrors | FieldErrors[] | string[] | string>;
      let next = holder[part];
      if (Array.isArray(child)) {
        if (!Array.isArray(next) || next.some((x) => typeof x === 'string')) next = child.map(() => ({}) as FieldErrors);
      } else if (next === undefined || Array.isArray(next) || typeof next === 'string') next = {};
      holder[part] = next as FieldErrors;
      node = next as FieldErrors | FieldErrors[];
      value = child;
    }
    const leaf = path[path.length - 1]!;
    const holder = node as Record<string, unknown>;
    const list = Array.isArray(holder[leaf]) && (holder[leaf] as unknown[]).every((x) => typeof x === 'string') ? (holder[leaf] as string[]) : [];
    const msg = messageFor(e);
    if (!list.includes(msg)) list.push(msg);
    holder[leaf] = list;
  }
  return out;
}

/** A list body's errors as the interface answers them: one object per item, `{}` for a valid one. */
export function itemErrors(body: unknown, errors: ErrorObject[]): HttpError {
  const atItem = errors.filter((e) => /^\/\d+/.test(e.instancePath));
  if (!Array.isArray(body) || atItem.length < errors.length) {
    const whole = errors.find((e) => !/^\/\d+/.test(e.instancePath));
    return messageError(whole ? messageFor(whole) : 'Expected a list.');
  }
  const byItem = new Map<number, ErrorObject[]>();
  for (const e of atItem) {
    const [, index, ...rest] = e.instancePath.split('/');
    const i = Number(index);
    byItem.set(i, [...(byItem.get(i) ?? []), { ...e, instancePath: rest.length ? `/${rest.join('/')}` : '' }]);
  }
  return new HttpError(400, body.map((item: unknown, i) => (byItem.has(i) ? toFieldErrors(byItem.get(i)!, item) : {})));
}
