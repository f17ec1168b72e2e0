// The event stream (docs/stream.md): GET /v2/stream/ with the Authorization header, or
// GET /v2/stream/tickets/<ticket>/ with a single-use ticket from POST /v2/stream/tickets/
// (for a browser's EventSource, which cannot send the header). Server-sent events of what
// the caller may see, resumable with Last-Event-ID (api/stream/hub.ts).
import type { Context } from 'koa';
import type { User } from '../../../domain/accounts/users.ts';
import { organizationsOf } from '../../../domain/reference/visibility.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf, type Principal } from '../../http/auth.ts';
import type { Handlers, QueryOf } from '../../http/contract.ts';
import { badRequest, HttpError, invalidToken } from '../../http/errors.ts';
import { audienceOf, type Audience, type StreamQuery } from '../../stream/audience.ts';
import { decode } from '../../stream/cursor.ts';
import { frame } from '../../stream/events.ts';
import type { CheckMemo, CheckResult } from '../../stream/hub.ts';
import { StreamTickets, type TicketHolder } from '../../stream/tickets.ts';

/** How long an EventSource waits before reconnecting. */
const RETRY_MS = 3_000;

export function streamHandlers(deps: ApiDeps): Handlers {
  const tickets = new StreamTickets(deps.redis, deps.now);
  return {
    openStream: async (ctx) => {
      const p = principalOf(ctx.state);
      await open(deps, ctx, p.user, holderOf(p), ctx.state.query as QueryOf<'openStream'>);
    },
    openStreamWithTicket: async (ctx) => {
      const holder = await tickets.redeem(String(ctx.state.params?.ticket ?? ''));
      if (!holder || !(await credentialAlive(deps, holder))) throw invalidToken();
      const user = await deps.activeUsers.get(holder.userId);
      if (!user?.is_active) throw invalidToken();
      await open(deps, ctx, user, holder, ctx.state.query as QueryOf<'openStreamWithTicket'>);
    },
    createStreamTicket: async (ctx) => {
      const issued = await tickets.issue(holderOf(principalOf(ctx.state)));
      ctx.status = 201;
      ctx.body = { ticket: issued.ticket, expires_at: issued.expiresAt.toISOString(), url: `/v2/stream/tickets/${issued.ticket}/` };
    },
  };
}

function holderOf(p: Principal): TicketHolder {
  return p.via === 'api-key' ? { userId: p.user.id, via: 'api-key', apiKeyId: p.apiKey!.id } : { userId: p.user.id, via: 'token', tokenDigest: p.tokenDigest };
}

type Query = StreamQuery & { last_event_id?: string };

async function open(deps: ApiDeps, ctx: Context, user: User, holder: TicketHolder, query: Query): Promise<void> {
  const hub = deps.stream;
  if (!hub) throw new Error('the stream hub is not running');
  const audience = await audienceOf(deps, user, query);
  const lastId = ctx.get('Last-Event-ID') || query.last_event_id;
  let resume: number[] | 'other-layout' | undefined;
  let ahead = false;
  if (lastId) {
    const d = decode(hub.layout, lastId.trim());
    if (d.kind === 'invalid') throw badRequest({ last_event_id: ['Not an event id of this stream.'] });
    resume = d.kind === 'ok' ? d.position : 'other-layout';
    // Past the topics' ends: waiting for the stream to reach it would hold back every event until then.
    if (d.kind === 'ok' && (await hub.pastTheEnd(d.position))) {
      resume = 'other-layout';
      ahead = true;
    }
  }
  const res = ctx.res;
  // Koa leaves the answer to us: it stays open, written as events come.
  ctx.respond = false;
  ctx.status = 200;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    // Proxies that buffer answers (nginx) pass this one on as it is written.
    'X-Accel-Buffering': 'no',
  });
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setTimeout(0);
  const { attached, start, detach } = hub.attach(
    {
      write: (text) => res.write(text),
      onDrain: (then) => res.once('drain', then),
      end: () => {
        res.end();
        // A client that reads nothing never lets the end through.
        setTimeout(() => res.destroy(), 5_000).unref();
      },
      audience,
      check: checker(deps, user, holder, query, audience),
    },
    resume,
  );
  res.once('close', detach);
  res.write(`retry: ${RETRY_MS}\n\n`);
  if (attached.kind === 'live') res.write(`id: ${attached.id}\n\n`);
  if (attached.kind === 'reset') {
    const reason = ahead ? 'This id is ahead of every event of the stream: read the endpoints again.' : 'The events after this id are no longer kept: read the endpoints again.';
    res.write(frame('reset', attached.id, JSON.stringify({ reason })));
  }
  start();
}

const memo = <T>(m: CheckMemo, key: string, read: () => Promise<T>): Promise<T> => {
  let p = m.get(key) as Promise<T> | undefined;
  if (!p) {
    p = read();
    m.set(key, p);
  }
  return p;
};

async function credentialAlive(deps: ApiDeps, h: TicketHolder, m: CheckMemo = new Map()): Promise<boolean> {
  if (h.via === 'token') return h.tokenDigest !== undefined && memo(m, `token:${h.tokenDigest}`, () => deps.tokens.isActive(h.tokenDigest!));
  const key = await memo(m, `key:${h.apiKeyId}`, () => deps.apiKeys.byIdForUser(h.apiKeyId!, h.userId));
  return key !== undefined && key.revokedAt === null && key.expiresAt > deps.now() && key.scopes.includes('metrics:read');
}

/**
 * The recheck of an open stream: its token or key still valid, its user still active with
 * the same organizations (else the stream ends); its audience read again when the
 * reference lists changed (a filter no longer allowed ends it).
 */
function checker(deps: ApiDeps, user: User, holder: TicketHolder, query: Query, first: Audience): (m: CheckMemo) => Promise<CheckResult> {
  // The lists the audience was read from (read again only when they change).
  let lists: Promise<unknown> = deps.referenceLists.lists();
  let audience = first;
  return async (m) => {
    if (!(await credentialAlive(deps, holder, m))) return { kind: 'end', reason: 'credential' };
    const now = await memo(m, `user:${user.id}`, () => deps.activeUsers.get(user.id));
    if (!now?.is_active || now.is_staff !== user.is_staff) return { kind: 'end', reason: 'user' };
    const orgs = await memo(m, `orgs:${user.id}`, async () => (await organizationsOf(deps, now)).map((o) => o.slug).sort().join(','));
    if (orgs !== audience.organizations) return { kind: 'end', reason: 'organizations' };
    const current = await deps.referenceLists.lists();
    if (current === (await lists)) return { kind: 'same' };
    lists = Promise.resolve(current);
    try {
      audience = await audienceOf(deps, now, query);
    } catch (e) {
      if (e instanceof HttpError) return { kind: 'end', reason: 'filters' };
      throw e;
    }
    return { kind: 'audience', audience };
  };
}
