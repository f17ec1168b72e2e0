// Single-use stream tickets for clients that cannot send an Authorization header (a
// browser's EventSource): POST /v2/stream/tickets/ with the header gives a ticket valid 30 s
// that opens one stream as the caller who asked for it. Only its SHA-256 is kept (Redis),
// and redeeming it deletes it in the same command, so it opens one stream at most. Losing
// Redis loses only tickets nobody has used yet.
import crypto from 'node:crypto';
import type { Redis } from 'ioredis';

export const TICKET_TTL_MS = 30_000;
export const TICKET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Who the ticket opens a stream for, and the credential that asked for it (checked again while the stream is open). */
export interface TicketHolder {
  userId: number;
  via: 'token' | 'api-key';
  tokenDigest?: string;
  apiKeyId?: number;
}

const keyOf = (ticket: string) => `stream:ticket:${crypto.createHash('sha256').update(ticket).digest('hex')}`;

export class StreamTickets {
  constructor(
    private readonly redis: Redis,
    private readonly now: () => number,
  ) {}

  async issue(holder: TicketHolder): Promise<{ ticket: string; expiresAt: Date }> {
    const ticket = crypto.randomBytes(32).toString('base64url');
    await this.redis.set(keyOf(ticket), JSON.stringify(holder), 'PX', TICKET_TTL_MS);
    return { ticket, expiresAt: new Date(this.now() + TICKET_TTL_MS) };
  }

  /** The holder, once: a second redeem, or one after 30 s, finds nothing. */
  async redeem(ticket: string): Promise<TicketHolder | undefined> {
    if (!TICKET_PATTERN.test(ticket)) return undefined;
    const raw = await this.redis.getdel(keyOf(ticket));
    return raw ? (JSON.parse(raw) as TicketHolder) : undefined;
  }
}
