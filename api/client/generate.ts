// Writes api/client/schema.ts, the types of every path, parameter, body and answer, from
// api/openapi.yaml (`npm run client:generate`). The contract test regenerates them and
// fails when the committed file differs, so the client cannot drift from the document.
import fs from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

export const DOCUMENT = new URL('../openapi.yaml', import.meta.url);
export const TYPES = new URL('./schema.ts', import.meta.url);

export async function clientTypes(): Promise<string> {
  return COMMENT_HEADER + astToString(await openapiTS(DOCUMENT));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\/api\//, '/api/'))) {
  fs.writeFileSync(TYPES, await clientTypes());
  process.stderr.write(`wrote ${TYPES.pathname}\n`);
}
