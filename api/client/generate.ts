// Writes api/client/schema.ts, the types of every path, parameter, body and answer, from
// api/openapi.yaml (`npm run client:generate`). The contract test regenerates them and
// fails when the committed file differs, so the client cannot drift from the document.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

export const DOCUMENT = new URL('../openapi.yaml', import.meta.url);
export const TYPES = new URL('./schema.ts', import.meta.url);

export async function clientTypes(): Promise<string> {
  // A field with a default may be left out of a request: not required in its type.
  return COMMENT_HEADER + astToString(await openapiTS(DOCUMENT, { defaultNonNullable: false }));
}

// Run as a command (`npm run client:generate`), not when imported by the contract test.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  void clientTypes().then((text) => {
    fs.writeFileSync(TYPES, text);
    process.stderr.write(`wrote ${fileURLToPath(TYPES)}\n`);
  });
}
