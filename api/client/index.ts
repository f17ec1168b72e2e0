// The typed client of the API, generated from api/openapi.yaml (`npm run client:generate`
// writes ./schema.ts): every path, parameter, body and answer typed as the document says.
//
//   const api = createApiClient('http://127.0.0.1:8080', { token });
//   const { data, error } = await api.GET('/v2/organizations/loans/{id}/', { params: { path: { id: 7 } } });
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.ts';

export type { components, operations, paths } from './schema.ts';

export interface Credentials {
  /** A token from a sign-in: `Authorization: Token <token>`. */
  token?: string;
  /** An API key: `Authorization: Api-Key <key>`. */
  apiKey?: string;
}

export type ApiClient = Client<paths>;

export function createApiClient(baseUrl: string, credentials: Credentials = {}, fetchImpl?: typeof fetch): ApiClient {
  const authorization = credentials.token ? `Token ${credentials.token}` : credentials.apiKey ? `Api-Key ${credentials.apiKey}` : undefined;
  return createClient<paths>({
    baseUrl,
    headers: authorization ? { Authorization: authorization } : {},
    // Lists as the interface writes them: one comma-separated value.
    querySerializer: { array: { style: 'form', explode: false } },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}
