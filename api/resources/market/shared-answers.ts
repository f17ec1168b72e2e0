// The market handlers behind RecentAnswers (api/market-caches/recent-answers.ts): a request
// identical to one begun less than a second ago (same path, parameters, output format and
// visibility) gets that one's answer, computed once. The handler's response is taken as
// bytes, so every request sharing it is sent the same.
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { Answer, RecentAnswers } from '../../market-caches/recent-answers.ts';
import type { RawParams } from './schemas.ts';
import { callerOf, type Caller, type MarketHandler, type MarketServices } from './services.ts';

/** Objects with their keys sorted, so `{a, b}` and `{b, a}` are the same request. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}

/** What the caller may see, as the handlers read it: the staff flag (the leaderboard's bounds), the assets and the pairs. */
function visibility(s: MarketServices, { user, scope }: Caller): string {
  return `${user.is_staff ? 'staff' : 'user'}:${s.scopes.digest(scope)}`;
}

async function bytesOf(body: unknown): Promise<Buffer> {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Readable) {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    return Buffer.concat(chunks);
  }
  // As Koa would send it.
  return Buffer.from(JSON.stringify(body));
}

/** The handler's response to this request, as bytes. */
async function answerOf(ctx: Context, handler: MarketHandler, raw: RawParams, caller: Caller): Promise<Answer> {
  await handler(ctx, raw, caller);
  const disposition = ctx.response.get('Content-Disposition');
  return { status: ctx.status, type: ctx.response.get('Content-Type'), headers: disposition ? { 'Content-Disposition': disposition } : {}, body: await bytesOf(ctx.body) };
}

export function sharedAnswers(s: MarketServices, answers: RecentAnswers, path: string, handler: MarketHandler): (ctx: Context, raw: RawParams) => Promise<void> {
  return async (ctx, raw) => {
    const caller = await callerOf(s, ctx);
    if (!answers.enabled) return handler(ctx, raw, caller);
    const key = JSON.stringify([path, canonical(raw), ctx.query.type ?? null, ctx.query.filename ?? null, visibility(s, caller)]);
    const a = await answers.get(key, () => answerOf(ctx, handler, raw, caller));
    ctx.status = a.status;
    ctx.set(a.headers);
    ctx.type = a.type;
    ctx.body = a.body;
  };
}
