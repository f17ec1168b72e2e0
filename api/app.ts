// The Koa application: one error handler, the routes of every resource (each with its
// authentication, body parser and input check: api/http/contract.ts), and an HTML 404 page
// for URLs that match none.
import Router from '@koa/router';
import Koa from 'koa';
import compress from 'koa-compress';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { ApiDeps } from './deps.ts';
import { HttpError, MESSAGES, methodNotAllowed, NOT_FOUND_PAGE, throttled } from './http/errors.ts';
import { LockBusy } from '../lib/locks.ts';
import { webApp } from './http/web-app.ts';
import { Contract, type Handlers } from './http/contract.ts';
import { adminHandlers } from './resources/admin/routes.ts';
import { apiKeyHandlers } from './resources/api-keys/routes.ts';
import { authHandlers } from './resources/auth/routes.ts';
import { loanHandlers } from './resources/loans/routes.ts';
import { marketMakerHandlers } from './resources/market-makers/routes.ts';
import { marketHandlers } from './resources/market/routes.ts';
import { organizationHandlers } from './resources/organizations/routes.ts';
import { passkeyHandlers } from './resources/passkeys/routes.ts';
import { passwordHandlers } from './resources/password/routes.ts';
import { reportedMetricHandlers } from './resources/reported-metrics/routes.ts';
import { rfqHandlers } from './resources/rfqs/routes.ts';
import { streamHandlers } from './resources/stream/routes.ts';
import { targetHandlers } from './resources/targets/routes.ts';
import { totpHandlers } from './resources/totp/routes.ts';

/** Every operation of api/openapi.yaml, mounted from it: its security, its input check, its handler. */
export function createRouter(deps: ApiDeps, contract: Contract = new Contract()): Router {
  // Paths as the contract writes them: lower case, one trailing slash (another form is a 404).
  const router = new Router({ sensitive: true, strict: true });
  const handlers: Handlers = {
    ...authHandlers(deps),
    ...organizationHandlers(deps),
    ...adminHandlers(deps),
    ...marketHandlers(deps),
    ...marketMakerHandlers(deps),
    ...targetHandlers(deps),
    ...loanHandlers(deps),
    ...rfqHandlers(deps),
    ...totpHandlers(deps),
    ...apiKeyHandlers(deps),
    ...passkeyHandlers(deps),
    ...passwordHandlers(deps),
    ...reportedMetricHandlers(deps),
    ...streamHandlers(deps),
    getOpenApiDocument: (ctx) => {
      ctx.type = 'application/yaml';
      ctx.body = contract.text;
    },
  };
  contract.mount(router, deps, handlers);
  return router;
}

export function createApp(deps: ApiDeps): Koa {
  const app = new Koa();
  const router = createRouter(deps);
  // What Koa reports beside the answers (a request stream's error): a client that went away
  // mid-answer, as a stream's client does, is no failure of the service.
  app.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.code === 'ECONNABORTED' || err.code === 'ERR_STREAM_PREMATURE_CLOSE') deps.log.debug('client gone', { code: err.code });
    else deps.log.error('request stream failed', { err, stack: err.stack });
  });

  app.use(async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = NOT_FOUND_PAGE;
      }
    } catch (thrown) {
      // A lock held past the wait is the service being busy: the client retries (429).
      const err = thrown instanceof LockBusy ? throttled(thrown.retryAfterSeconds) : thrown;
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
  // Answers over 1 kB go compressed to a client that accepts gzip or brotli: market-maker
  // rows repeat every key. A stream of events is never held back to be compressed.
  app.use(
    compress({
      threshold: 1024,
      filter: (type) => type !== 'text/event-stream' && /json|text\/|javascript|yaml|svg/.test(type),
      br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } },
      gzip: { level: 6 },
      deflate: false,
    }),
  );
  // An answer's JSON written once, as text: Koa writes an object body when it responds, and
  // its `length` getter, which the compression above reads for every answer, wrote it a
  // second time (a week of trusted depth is 10 MiB of JSON).
  app.use(async (ctx, next) => {
    await next();
    const body: unknown = ctx.body;
    if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== 'function') ctx.body = JSON.stringify(body);
  });
  // The web app's files (web/dist, built by ops/web-build.ts) at /app/.
  app.use(webApp(fileURLToPath(new URL('../web/dist', import.meta.url))));
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
