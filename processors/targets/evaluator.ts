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
import type { Range } from '../../domain/market/window.ts';
import { windowOf } from '../../domain/targets/window.ts';
import type { Pair, ReferenceRepository } from '../../domain/reference/repository.ts';
import { ASSET_TWAP_MS, assetTwaps } from '../../domain/market/prices.ts';
import { EvaluationRepository, type Evaluation, type StateRow } from '../../domain/targets/evaluations.ts';
import type { Target, TargetRepository } from '../../domain/targets/repository.ts';
import { changeDate, isMet, nextStanding } from '../../domain/targets/status.ts';
import { gbValue, mmValue, type BookWindow, type TradeWindow, type TrustedWindow } from '../../domain/targets/values.ts';
import { sumWallets, walletValuesOf, type Values } from '../../domain/market-makers/values.ts';
import { LEVELS_BPS } from '../../domain/market/facts.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';
import type { TargetEventMessage } from '../../schemas/index.ts';
import { AgreementStore } from '../../domain/agreements/store.ts';
import { loanOf, type LoanRecord } from '../../domain/loans/loan.ts';
import type { RolledUp } from '../../domain/market/repositories/rollup-marks.ts';
import type { PolledJob } from '../shell/poller.ts';
import { HOUR_MS, MINUTE_MS } from '../../lib/time.ts';

export const MAX_CATCH_UP = 60;
const ALL_LEVELS = LEVELS_BPS.map((_, i) => i);

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

/** Run every few seconds by the service's Poller (processors/shell/poller.ts): each run catches up to the due minute. */
export class TargetEvaluator implements PolledJob {
  readonly name = 'target evaluation';
  private readonly evaluations: EvaluationRepository;

  private readonly agreements: AgreementStore;

  constructor(private readonly deps: EvaluatorDeps) {
    this.evaluations = new EvaluationRepository(deps.ch);
    this.agreements = new AgreementStore(deps.ch);
  }

  /** The newest minute that can be evaluated now: the end of the last minute past its lateness. */
  dueMinute(): number {
    return Math.floor((this.deps.now() - this.deps.latenessMs - MINUTE_MS) / MINUTE_MS) * MINUTE_MS;
  }

  runOnce(): Promise<MinuteResult[]> {
    return this.catchUp();
  }

  /** Evaluates every minute from the last one evaluated up to the due one, in order. */
  async catchUp(): Promise<MinuteResult[]> {
    const due = this.dueMinute();
    const last = await this.evaluations.lastMinute();
    const first = last === undefined ? due : Math.max(last + MINUTE_MS, due - (MAX_CATCH_UP - 1) * MINUTE_MS);
    const out: MinuteResult[] = [];
    for (let m = first; m <= due; m += MINUTE_MS) out.push(await this.evaluateMinute(m));
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

  /** The 24-hour TWAP over the whole hours before the minute of the assets price-scaled targets follow. */
  private async assetTwaps(targets: Target[], pairs: readonly Pair[], minute: number): Promise<Map<string, number>> {
    const wanted = new Set(targets.filter((t) => followsPrice(t) && t.scaling_source === 'asset_twap_24h').map((t) => t.asset));
    if (wanted.size === 0) return new Map();
    const to = Math.floor(minute / HOUR_MS) * HOUR_MS;
    return assetTwaps(this.deps.ch, wanted, pairs, to - ASSET_TWAP_MS, to, await this.deps.rolledUp.through());
  }
}

/** Each market maker's trusted values per pair at every level, by organization and pair: its wallets together. */
function trustedByOrganization(trusted: Awaited<ReturnType<EvaluationRepository['trusted']>>, walletOrg: Map<number, string>): Map<string, TrustedWindow> {
  const wallets = new Map<string, Values[]>();
  for (const w of walletValuesOf(trusted.depth, trusted.volume, ALL_LEVELS)) {
    const org = walletOrg.get(w.wallet_id);
    if (org === undefined) continue;
    const k = `${org}\u0000${key(w.exchange, w.pair)}`;
    const list = wallets.get(k);
    if (list) list.push(w.values);
    else wallets.set(k, [w.values]);
  }
  return new Map([...wallets].map(([k, v]) => [k, sumWallets(v)]));
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
