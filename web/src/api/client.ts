// The one place the app talks to the API: an openapi-fetch client typed by the OpenAPI
// document (api/openapi.yaml). Every call sends the session's token; a 401 ends the
// session with the API's own words.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { session } from './session';

export type { paths };

const auth: Middleware = {
  onRequest({ request }) {
    const token = session.token();
    if (token && !request.headers.has('Authorization')) request.headers.set('Authorization', `Token ${token}`);
    return request;
  },
  async onResponse({ request, response }) {
    if (response.status === 401 && request.headers.get('Authorization') === `Token ${session.token()}`) {
      const body = (await response.clone().json().catch(() => ({}))) as { detail?: string };
      session.end(body.detail ?? 'Invalid token.');
    }
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);

/** An answer other than 2xx, with the message the API gave. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly retryAfterSeconds: number | null,
  ) {
    super(apiWords(body) ?? `The service answered ${status}.`);
    this.name = 'ApiError';
  }
}

/** The API's own words from an error body (specification part 7's shapes). */
export function apiWords(body: unknown): string | null {
  if (typeof body === 'string') return body || null;
  if (Array.isArray(body)) return body.map(apiWords).filter(Boolean).join(' ') || null;
  if (!body || typeof body !== 'object') return null;
  const b = body as Record<string, unknown>;
  if (typeof b.detail === 'string') return b.detail;
  if (typeof b.message === 'string') return b.message;
  const parts: string[] = [];
  for (const [field, v] of Object.entries(b)) {
    const words = apiWords(v);
    if (words) parts.push(field === 'non_field_errors' ? words : `${field}: ${words}`);
  }
  return parts.join(' ') || null;
}

/** The data of an openapi-fetch answer, or an ApiError. */
export function unwrap<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.response.ok) return r.data as T;
  const after = Number(r.response.headers.get('Retry-After'));
  throw new ApiError(r.response.status, r.error, Number.isFinite(after) && after > 0 ? after : null);
}

/**
 * Rows of the metric endpoints. The document describes them as objects whose columns
 * depend on the levels asked (bid_<L>bps ...), so they are read column by column.
 */
export type Row = Record<string, unknown>;
export const rowsOf = (data: unknown): Row[] => (Array.isArray(data) ? (data as Row[]) : []);
export const num = (row: Row | undefined, column: string): number | null => {
  const v = row?.[column];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};
export const str = (row: Row | undefined, column: string): string => {
  const v = row?.[column];
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && 'slug' in v) return String((v as { slug: unknown }).slug);
  return v === null || v === undefined ? '' : String(v);
};
