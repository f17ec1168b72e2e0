// The target evaluator (addendum section 6; docs/targets.md): every minute, each active
// target's value over the trailing 60 minutes (for a session target, only the part inside
// its session) against its effective threshold, through the status machine
// (domain/targets/status.ts). A minute is evaluated once its minutes are written: the window
// ends at the last minute whose lateness has passed.
//
// One minute at a time, in order: its evaluations are written (rewritten alike if the
// minute runs again), then one targets.events message per status change (its event_id is
// the target and minute, so a consumer drops a repeat), then the states with the progress
// in one insert. A crash before that insert leaves the minute unapplied, and the next start
// evaluates it again from the same states: no transition is skipped or repeated. Minutes
// missed while the service was down are caught up, at most MAX_CATCH_UP of them.
import { followsPrice, loanKey, scaling } from '../../domain/targets/scaling.ts';
import type { Producer } from 'kafkajs';
import { sendInParts } from '../../lib/kafka.ts';
import { DEFAULT_SESSION_ZONE, type Session } from '../../domain/market/facts.ts';
import { mergeRanges, sessionRanges, type Range, type SessionDay } from '../../domain/market/window.ts';
import type { ReferenceRepository } from '../../domain/reference/repository.ts';
import { EvaluationRepository, type Evaluation, type PairKey, type StateRow } from '../../domain/targets/evaluations.ts';
import type { TargetSession } from '../../domain/targets/facts.ts';
import type { Target, TargetRepository } from '../../domain/targets/repository.ts';
import { changeDate, isMet, nextStanding } from '../../domain/targets/status.ts';
import { gbValue, mmValue, type BookWindow, type TradeWindow, type TrustedWindow } from '../../domain/targets/values.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';
import type { TargetEventMessage } from '../../schemas/index.ts';
import { AgreementStore } from '../../domain/agreements/store.ts';
import { loanOf, type LoanRecord } from '../../domain/loans/loan.ts';
import type { RolledUp } from '../../domain/market/repositories/rollup-marks.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
export const WINDOW_MS = HOUR;
export const MAX_CATCH_UP = 60;
const STABLE_QUOTES = new Set(['USD', 'USDT', 'USDC', 'FDUSD', 'DAI']);

/** The market session a target's `market_hours` names (`overnight` is the blue-ocean session). */
const SESSION_OF: Record<TargetSession, Session> = {
  'market-hours': 'market-hours',
  'pre-market': 'pre-market',
  'after-hours': 'after-hours',
  overnight: 'blue-ocean',
  'weekend-hours': 'weekend-hours',
};
const ALL_DAYS: SessionDay[] = (['last', 'this'] as const).flatMap((week) => [0, 1, 2, 3, 4, 5, 6].map((day) => ({ week, day })));

/** The part of the window [minute - 60 min, minute) a target is evaluated over; empty outside its session. */
export function windowOf(session: TargetSession | null, minute: number): Range[] {
  const whole: Range = [minute - WINDOW_MS, minute];
  if (!session) return [whole];
  // This week's and last week's session intervals around the window, clipped to it.
  const ranges = [...sessionRanges(SESSION_OF[session], ALL_DAYS, DEFAULT_SESSION_ZONE, minute), ...sessionRanges(SESSION_OF[session], ALL_DAYS, DEFAULT_SESSION_ZONE, minute + 7 * 24 * HOUR)];
  return mergeRanges(ranges.map(([a, b]): Range => [Math.max(a, whole[0]), Math.min(b, whole[1])]).filter(([a, b]) => a < b));
}

export interface EventPublisher {
  publish(events: readonly TargetEventMessage[]): Promise<void>;
}

export interface EvaluatorDeps {
  ch: ClickHouse;
  targets: TargetRepository;
  reference: ReferenceRepository;
  events: EventPublisher;
  log: Logger;
  now: () => number;
  latenessMs: number;
  /** Before when the hour rows are complete: the process's one reader of the marks. */
  rolledUp: RolledUp;
}

export interface MinuteResult {
  minute: number;
  evaluated: number;
  changes: number;
}

const key = (exchange: string, pair: string) => `${exchange}\u0000${pair}`;

export class TargetEvaluator {
  private readonly evaluations: EvaluationRepository;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  private readonly agreements: AgreementStore;

  constructor(private readonly deps: EvaluatorDeps) {
    this.evaluations = new EvaluationRepository(deps.ch);
    this.agreements = new AgreementStore(deps.ch);
  }

  /** The newest minute that can be evaluated now: the end of the last minute past its lateness. */
  dueMinute(): number {
    return Math.floor((this.deps.now() - this.deps.latenessMs - MINUTE) / MINUTE) * MINUTE;
  }

  start(pollMs = 5_000): void {
    const tick = () => {
      this.running = this.running
        .then(async () => {
          await this.catchUp();
        })
        .catch((e: unknown) => this.deps.log.error('target evaluation failed', { err: e as Error }));
    };
    this.timer = setInterval(tick, pollMs);
    tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Evaluates every minute from the last one evaluated up to the due one, in order. */
  async catchUp(): Promise<MinuteResult[]> {
    const due = this.dueMinute();
    const last = await this.evaluations.lastMinute();
    const first = last === undefined ? due : Math.max(last + MINUTE, due - (MAX_CATCH_UP - 1) * MINUTE);
    const out: MinuteResult[] = [];
    for (let m = first; m <= due; m += MINUTE) out.push(await this.evaluateMinute(m));
    return out;
  }

  /** Evaluates every active target for the window ending at `minute`, and applies the result. */
  async evaluateMinute(minute: number): Promise<MinuteResult> {
    const all = (await this.deps.targets.all()).filter((t) => t.active);
    const bySession = new Map<string, { ranges: Range[]; targets: Target[] }>();
    for (const t of all) {
      const k = t.market_hours ?? '';
      let g = bySession.get(k);
      if (!g) {
        g = { ranges: windowOf(t.market_hours, minute), targets: [] };
        bySession.set(k, g);
      }
      if (g.ranges.length > 0) g.targets.push(t);
    }
    const [wallets, pairs] = await Promise.all([this.deps.reference.wallets(), this.deps.reference.pairs()]);
    const walletOrg = new Map(wallets.map((w) => [w.id, w.organization]));
    const [twap, loanTwap] = await Promise.all([this.assetTwaps(all, pairs, minute), this.loanTwaps(all)]);

    const evaluations: Evaluation[] = [];
    const states: StateRow[] = [];
    const events: TargetEventMessage[] = [];
    const at = this.deps.now();
    for (const { ranges, targets } of bySession.values()) {
      if (targets.length === 0) continue;
      const pairKeys = [...new Map(targets.map((t) => [key(t.exchange, t.pair), { exchange: t.exchange, pair: t.pair }])).values()];
      const mmPairs = [...new Map(targets.filter((t) => t.type === 'mm').map((t) => [key(t.exchange, t.pair), { exchange: t.exchange, pair: t.pair }])).values()];
      const [books, trades, trusted] = await Promise.all([
        this.evaluations.books(pairKeys, ranges),
        this.evaluations.trades(pairKeys, ranges),
        this.evaluations.trusted(mmPairs, ranges),
      ]);
      const bookOf = new Map<string, BookWindow>(books.map((b) => [key(b.exchange, b.pair), b]));
      const tradeOf = new Map<string, TradeWindow>(trades.map((t) => [key(t.exchange, t.pair), t]));
      const own = trustedByOrganization(trusted, walletOrg);
      for (const t of targets) {
        const k = key(t.exchange, t.pair);
        const value = t.type === 'gb' ? gbValue(t.metric, bookOf.get(k), tradeOf.get(k)) : mmValue(t.metric, own.get(`${t.organization}\u0000${k}`), bookOf.get(k), tradeOf.get(k));
        const scaled = scaling(t, twap, loanTwap);
        const met = value === null ? null : isMet(value, scaled.effective_threshold, t.direction);
        const next = nextStanding({ status: t.status, streak: t.met_streak }, met);
        const changed = next.status !== t.status;
        const updates = changed ? [...t.updates, { status: next.status, updated_at: changeDate(at, t.created_at, t.updates) }] : t.updates;
        evaluations.push({ id: t.id, minute, value, effective_threshold: scaled.effective_threshold, met, status: next.status });
        states.push({ id: t.id, status: next.status, updates, met_streak: next.streak, ...scaled });
        if (changed) {
          events.push({
            event_id: `${t.id}:${minute}`,
            target_id: t.id,
            type: t.type,
            organization: t.organization,
            asset: t.asset,
            exchange: t.exchange,
            pair: t.pair,
            metric: t.metric,
            market_hours: t.market_hours,
            previous_status: t.status,
            status: next.status,
            value,
            effective_threshold: scaled.effective_threshold,
            direction: t.direction,
            minute: new Date(minute).toISOString(),
            telegram_notifications: t.telegram_notifications,
          });
        }
      }
    }
    await this.evaluations.saveEvaluations(evaluations, at);
    await this.deps.events.publish(events);
    await this.evaluations.saveStates(states, minute);
    return { minute, evaluated: evaluations.length, changes: events.length };
  }

  /** The `start_twap` of the active loan each loan-scaled target follows, by loanKey. */
  private async loanTwaps(targets: Target[]): Promise<Map<string, number>> {
    if (!targets.some((t) => followsPrice(t) && t.scaling_source === 'loan_twap')) return new Map();
    const loans = (await this.agreements.latest<LoanRecord['body']>('loan')).map(loanOf).filter((l) => l.status === 'active' && l.start_twap !== null);
    // Newest last, so a party with several active loans of one asset follows the newest.
    loans.sort((a, b) => a.id - b.id);
    const out = new Map<string, number>();
    for (const l of loans) {
      out.set(loanKey('mm', l.market_maker, l.asset), l.start_twap!);
      out.set(loanKey('gb', l.organization, l.asset), l.start_twap!);
    }
    return out;
  }

  /** The 24-hour TWAP (mean minute mid over the whole hours before the minute) of the assets price-scaled targets follow. */
  private async assetTwaps(targets: Target[], pairs: { exchange: string; pair: string; asset: string }[], minute: number): Promise<Map<string, number>> {
    const wanted = new Set(targets.filter((t) => followsPrice(t) && t.scaling_source === 'asset_twap_24h').map((t) => t.asset));
    if (wanted.size === 0) return new Map();
    // USD-quoted pairs only: their mids are USD prices (addendum section 7: the TWAP in USD).
    const of = pairs.filter((p) => wanted.has(p.asset) && STABLE_QUOTES.has(p.pair.split('/')[1] ?? ''));
    const assetOf = new Map(of.map((p) => [key(p.exchange, p.pair), p.asset]));
    const to = Math.floor(minute / HOUR) * HOUR;
    const rows = await this.evaluations.mids(of as PairKey[], to - 24 * HOUR, to, await this.deps.rolledUp.through());
    const sums = new Map<string, { s: number; n: number }>();
    for (const r of rows) {
      const a = assetOf.get(key(r.exchange, r.pair))!;
      const x = sums.get(a) ?? { s: 0, n: 0 };
      x.s += Number(r.mid_sum);
      x.n += Number(r.minutes);
      sums.set(a, x);
    }
    return new Map([...sums].filter(([, x]) => x.n > 0).map(([a, x]) => [a, x.s / x.n]));
  }
}

/** Each market maker's trusted values per pair: its wallets' means added together. */
function trustedByOrganization(
  trusted: { depth: { exchange: string; pair: string; wallet_id: number; minutes: number; bid_depth_sum: number[]; ask_depth_sum: number[] }[]; volume: { exchange: string; pair: string; wallet_id: number; fills: number; volume_usd: number; usd_fills: number }[] },
  walletOrg: Map<number, string>,
): Map<string, TrustedWindow> {
  const out = new Map<string, TrustedWindow>();
  const get = (wallet: number, exchange: string, pair: string) => {
    const org = walletOrg.get(wallet);
    if (org === undefined) return undefined;
    const k = `${org}\u0000${key(exchange, pair)}`;
    let v = out.get(k);
    if (!v) {
      v = { volume: null, bid: [], ask: [] };
      out.set(k, v);
    }
    return v;
  };
  const add = (a: number | null | undefined, b: number) => (a === null || a === undefined ? b : a + b);
  for (const d of trusted.depth) {
    const v = get(d.wallet_id, d.exchange, d.pair);
    if (!v || d.minutes === 0) continue;
    v.bid = d.bid_depth_sum.map((x, i) => add(v.bid[i], x / d.minutes));
    v.ask = d.ask_depth_sum.map((x, i) => add(v.ask[i], x / d.minutes));
    v.volume ??= 0;
  }
  for (const f of trusted.volume) {
    const v = get(f.wallet_id, f.exchange, f.pair);
    if (!v) continue;
    if (f.fills > 0 && f.usd_fills === 0) continue;
    v.volume = add(v.volume, f.volume_usd);
  }
  return out;
}

/** targets.events through a producer, framed with the topic's registered schema, keyed by target. */
export class KafkaEventPublisher implements EventPublisher {
  constructor(
    private readonly producer: Producer,
    private readonly topic: string,
    private readonly header: Buffer,
  ) {}

  async publish(events: readonly TargetEventMessage[]): Promise<void> {
    if (events.length === 0) return;
    // A minute may change thousands of statuses (the first evaluation of new targets).
    await sendInParts(
      this.producer,
      this.topic,
      events.map((e) => ({ key: String(e.target_id), value: Buffer.concat([this.header, Buffer.from(JSON.stringify(e))]) })),
    );
  }
}
