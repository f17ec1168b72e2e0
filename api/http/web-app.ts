// The web app (web/, built into web/dist) served at /app/: hashed files under assets/ are
// cached for a year (a new build has new names), index.html is never cached, and every
// path under /app/ that is not a file is a view of the app (index.html). A strict
// Content-Security-Policy allows nothing from another origin and no inline code.
import fs from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';

export const WEB_APP_PREFIX = '/app/';

export const WEB_APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** Serves `dir` (the app's build) under /app/; other paths go on to the API. */
export function webApp(dir: string): Koa.Middleware {
  const root = path.resolve(dir);
  return async (ctx, next) => {
    if (ctx.path === '/app') return ctx.redirect(WEB_APP_PREFIX);
    if (!ctx.path.startsWith(WEB_APP_PREFIX) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    let rel: string;
    try {
      rel = decodeURIComponent(ctx.path.slice(WEB_APP_PREFIX.length));
    } catch {
      return next();
    }
    const isView = rel === '' || !path.posix.basename(rel).includes('.');
    const file = isView ? path.join(root, 'index.html') : path.resolve(root, rel);
    if (!file.startsWith(root + path.sep)) return next();
    const stat = await fs.promises.stat(file).catch(() => undefined);
    // A missing build or file falls through to the HTML 404 page of every unknown URL.
    if (!stat?.isFile()) return next();
    ctx.set('Content-Security-Policy', WEB_APP_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    ctx.length = stat.size;
    ctx.lastModified = stat.mtime;
    ctx.body = ctx.method === 'HEAD' ? null : fs.createReadStream(file);
  };
}
