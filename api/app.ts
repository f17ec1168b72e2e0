// The Koa application: one error handler, one body parser, the routes of every resource,
// and an HTML 404 page for URLs that match none.
import Router from '@koa/router';
import Koa from 'koa';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { koaBody } from 'koa-body';
import type { ApiDeps } from './deps.ts';
import { HttpError, MESSAGES, methodNotAllowed, NOT_FOUND_PAGE, badRequest } from './http/errors.ts';
import { webApp } from './http/web-app.ts';
import { adminRoutes } from './resources/admin/routes.ts';
import { apiKeyRoutes } from './resources/api-keys/routes.ts';
import { authRoutes } from './resources/auth/routes.ts';
import { marketRoutes } from './resources/market/routes.ts';
import { marketMakerRoutes } from './resources/market-makers/routes.ts';
import { targetRoutes } from './resources/targets/routes.ts';
import { loanRoutes } from './resources/loans/routes.ts';
import { rfqRoutes } from './resources/rfqs/routes.ts';
import { organizationRoutes } from './resources/organizations/routes.ts';
import { passkeyRoutes } from './resources/passkeys/routes.ts';
import { passwordRoutes } from './resources/password/routes.ts';
import { reportedMetricRoutes } from './resources/reported-metrics/routes.ts';
import { totpRoutes } from './resources/totp/routes.ts';

/** Every route of the API; the OpenAPI test reads the paths from here. */
export function createRouter(deps: ApiDeps): Router {
  const router = new Router();
  const openapi = fs.readFileSync(new URL('./openapi.yaml', import.meta.url), 'utf8');
  router.get('/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml';
    ctx.body = openapi;
  });
  authRoutes(router, deps);
  organizationRoutes(router, deps);
  adminRoutes(router, deps);
  marketRoutes(router, deps);
  marketMakerRoutes(router, deps);
  targetRoutes(router, deps);
  loanRoutes(router, deps);
  rfqRoutes(router, deps);
  totpRoutes(router, deps);
  apiKeyRoutes(router, deps);
  passkeyRoutes(router, deps);
  passwordRoutes(router, deps);
  reportedMetricRoutes(router, deps);
  return router;
}

export function createApp(deps: ApiDeps): Koa {
  const app = new Koa();
  const router = createRouter(deps);

  app.use(async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = NOT_FOUND_PAGE;
      }
    } catch (err) {
      if (err instanceof HttpError) {
        ctx.status = err.status;
        ctx.set(err.headers);
        ctx.body = err.body;
      } else if (isBodyParseError(err)) {
        ctx.status = 400;
        ctx.body = { non_field_errors: [`Malformed request body: ${(err as Error).message}`] };
      } else {
        deps.log.error('request failed', { method: ctx.method, path: ctx.path, err: err as Error, stack: (err as Error)?.stack });
        ctx.status = 500;
        ctx.body = { detail: MESSAGES.serverError };
      }
    } finally {
      deps.log.debug('request', { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) });
    }
  });
  // The web app's files (web/dist, built by ops/web-build.ts) at /app/.
  app.use(webApp(fileURLToPath(new URL('../web/dist', import.meta.url))));
  app.use(
    koaBody({
      json: true,
      urlencoded: true,
      multipart: true,
      jsonLimit: '20mb',
      // Any JSON value parses, so each endpoint answers a body of the wrong shape in its own
      // words (the reported-metrics push: `{message}` for anything but a non-empty list).
      jsonStrict: false,
      formLimit: '1mb',
      // A malformed body is the client's fault: answer 400, not 500.
      onError: (err) => {
        throw badRequest({ non_field_errors: [`Malformed request body: ${err.message}`] });
      },
    }),
  );
  app.use(router.routes());
  app.use(async (ctx, next) => {
    await next();
    // A known path with another method: 405 in the error shape, with Allow.
    if (ctx.status === 404 && ctx.body === undefined && ctx.matched?.length) {
      const allowed = new Set(ctx.matched.flatMap((layer: { methods: string[] }) => layer.methods));
      if (allowed.size > 0) {
        ctx.set('Allow', [...allowed].join(', '));
        throw methodNotAllowed(ctx.method);
      }
    }
  });
  return app;
}

function isBodyParseError(err: unknown): boolean {
  const e = err as { status?: number; type?: string };
  return e?.status === 400 || e?.type === 'entity.parse.failed';
}
