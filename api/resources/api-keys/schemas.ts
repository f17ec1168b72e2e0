import type { Middleware } from 'koa';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../auth/api-keys.ts';
import { compile } from '../../http/validate.ts';

export interface CreateApiKeyBody {
  name: string;
  password: string;
  scopes: ApiKeyScope[];
  code?: string;
  /** Default and longest: one year from now. */
  expires_at?: string;
}

// Specification 4.3 and 8: name <= 100, code <= 32, scopes a non-empty list of known scopes.
export const createApiKeyBody = compile<CreateApiKeyBody>({
  type: 'object',
  required: ['name', 'password', 'scopes'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
    scopes: { type: 'array', minItems: 1, items: { type: 'string', enum: [...API_KEY_SCOPES] } },
    code: { type: 'string', maxLength: 32 },
    expires_at: { type: 'string', format: 'date-time' },
  },
});

/**
 * Forms send a list as repeated fields or as one comma-separated string (as JSON bodies
 * may too, specification 4.1): both become one list, without blanks or repeats.
 */
export const splitScopes: Middleware = async (ctx, next) => {
  const body = ctx.request.body as Record<string, unknown> | undefined;
  const raw = body?.scopes;
  if (typeof raw === 'string' || (Array.isArray(raw) && raw.every((s) => typeof s === 'string'))) {
    const items = ([] as string[]).concat(raw as string | string[]).flatMap((s) => s.split(','));
    body!.scopes = [...new Set(items.map((s) => s.trim()).filter((s) => s !== ''))];
  }
  await next();
};
