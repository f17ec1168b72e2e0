import { expect } from 'chai';
import fs from 'node:fs';
import { parse } from 'yaml';
import { createRouter } from '../../api/app.ts';
import { call } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

describe('api/openapi.yaml', () => {
  const doc = parse(fs.readFileSync(new URL('../../api/openapi.yaml', import.meta.url), 'utf8')) as { paths: Record<string, Record<string, unknown>> };

  it('documents exactly the routes the router serves', () => {
    const router = createRouter(testStack().service.deps);
    const served = new Set<string>();
    for (const layer of router.stack) {
      // The router writes parameters as `:id`, OpenAPI as `{id}`.
      const path = String(layer.path).replace(/:(\w+)/g, '{$1}');
      for (const m of layer.methods) if (m !== 'HEAD') served.add(`${m.toLowerCase()} ${path}`);
    }
    const documented = new Set<string>();
    for (const [p, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) documented.add(`${m} ${p}`);
    expect([...served].sort()).to.deep.equal([...documented].sort());
  });

  it('is served at /openapi.yaml', async () => {
    const r = await call('GET', '/openapi.yaml');
    expect(r.status).to.equal(200);
    expect(r.text).to.match(/^openapi: 3\.1\.0/);
  });
});
