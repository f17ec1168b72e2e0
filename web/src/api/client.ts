// The one place the app talks to the API: the typed client generated from the OpenAPI
// document (api/client/, api/openapi.yaml), with its types and its list serialization.
// Every call sends the session's token; a 401 ends the session with the API's own words.
import type { Client, Middleware } from 'openapi-fetch';
import { createApiClient, type components, type paths } from '../../../api/client/index.ts';
import { session } from './session';

export type { components, paths };
/** The document's named schemas: Target, Loan, MarketSummaryRow, ... */
export type Schemas = components['schemas'];
type GetPath = { [P in keyof paths]: paths[P] extends { get: { parameters: { query?: unknown } } } ? P : never }[keyof paths];
/** The query parameters of a GET, as the document types them (lists as arrays). */
export type QueryOf<P extends GetPath> = NonNullable<paths[P]['get']['parameters']['query']>;

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

// No credentials here: the token changes with the session, so the middleware reads it per
// call. Answers are typed as their JSON; a CSV download asks `parseAs: 'blob'`.
export const api: Client<paths, 'application/json'> = createApiClient(window.location.origin);
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

/** The items of a list answer: the list itself, or a page's results when a page was asked. */
export const itemsOf = <T>(data: T[] | { results?: T[] }): T[] => (Array.isArray(data) ? data : (data.results ?? []));

/**
 * A column of a metric row named by the levels asked (bid_<L>bps, <L>bps, ...): the document
 * types these rows with an index signature, so the column is a number, null, or absent.
 */
export const col = (row: Readonly<Record<string, unknown>> | undefined, column: string): number | null => {
  const v = row?.[column];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};
