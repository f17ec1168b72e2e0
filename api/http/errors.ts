// The few named error factories every route uses; the error handler turns them into the
// specification's shapes (part 7). Nothing else in the API builds an error body.

import type { FieldErrors } from '../../domain/outcome.ts';

export type { FieldErrors };

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
    this.name = 'HttpError';
  }
}

export const MESSAGES = {
  required: 'This field is required.',
  notAuthenticated: 'Authentication credentials were not provided.',
  invalidToken: 'Invalid token.',
  forbidden: 'You do not have permission to perform this action.',
  notFound: 'Not found.',
  serverError: 'A server error occurred.',
} as const;

/** 400 with fields named: `{field: [message]}`, `non_field_errors` for the request as a whole. */
export const badRequest = (fields: FieldErrors) => new HttpError(400, fields);
export const nonFieldError = (...messages: string[]) => new HttpError(400, { non_field_errors: messages });
/** 400 `{message}`: wrong two-factor code, key limit reached; 429 `{message}`: locked account. */
export const messageError = (message: string, status = 400, headers: Record<string, string> = {}) => new HttpError(status, { message }, headers);

export const notAuthenticated = () => new HttpError(401, { detail: MESSAGES.notAuthenticated }, { 'WWW-Authenticate': 'Token' });
export const invalidToken = () => new HttpError(401, { detail: MESSAGES.invalidToken }, { 'WWW-Authenticate': 'Token' });
export const forbidden = (detail: string = MESSAGES.forbidden) => new HttpError(403, { detail });
export const notFound = () => new HttpError(404, { detail: MESSAGES.notFound });
export const methodNotAllowed = (method: string) => new HttpError(405, { detail: `Method "${method}" not allowed.` });
export const payloadTooLarge = () => new HttpError(413, { detail: 'Request body too large: at most 20 MB of JSON or 1 MB of form.' });
export const headersTooLarge = { status: 431, detail: 'Request line and headers too large: at most 64 kB (send long lists in a POST body).' } as const;
export const unsupportedMediaType = (type: string) =>
  new HttpError(415, { detail: `Unsupported media type "${type}" in request.` });

export function throttled(waitSeconds: number): HttpError {
  const seconds = Math.max(1, Math.ceil(waitSeconds));
  return new HttpError(
    429,
    { detail: `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.` },
    { 'Retry-After': String(seconds) },
  );
}

/** The page a wrong URL gets: HTML, not JSON (specification part 7). */
export const NOT_FOUND_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Not Found</title></head>
<body>
<h1>Not Found</h1>
<p>The requested resource was not found on this server.</p>
</body>
</html>
`;
