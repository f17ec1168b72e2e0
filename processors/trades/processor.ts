// md.trades -> trade_minutes (-> trade_hours, trade_days): volume in USD, and the base
// amount and quote notional that give the VWAP. A trade id seen twice in a minute counts once.
import type { Kafka } from 'kafkajs';
import { trade } from '../../domain/market/families/trade.ts';
import { validateTrade, type TradeMessage } from '../../schemas/index.ts';
import { marketConsumer, type ProcessorDeps } from '../market/consumer.ts';
import type { WindowSpec } from '../market/windowed-pipeline.ts';
import type { QuoteRates } from '../../domain/market/prices.ts';
import type { BatchConsumer } from '../shell/batch-consumer.ts';
import type { Accumulator } from '../shell/minute-windows.ts';
import { ok } from '../shell/outcome.ts';
import { volume, vwap } from '../../domain/market/values.ts';

export const TRADES_GROUP = 'processor.trades';

export interface Trade {
  id: string | undefined;
  price: number;
  amount: number;
  usdRate: number | null;
}

export interface TradeMinuteRow {
  trades: number;
  amount: number;
  notional: number;
  volume_usd: number;
  usd_trades: number;
}

export class TradeMinute implements Accumulator<Trade, TradeMinuteRow> {
  private readonly r: TradeMinuteRow = { trades: 0, amount: 0, notional: 0, volume_usd: 0, usd_trades: 0 };
  private readonly ids = new Set<string>();

  add(t: Trade): void {
    if (t.id !== undefined) {
      if (this.ids.has(t.id)) return;
      this.ids.add(t.id);
    }
    this.r.trades++;
    this.r.amount += t.amount;
    this.r.notional += t.price * t.amount;
    if (t.usdRate !== null) {
      this.r.volume_usd += t.price * t.amount * t.usdRate;
      this.r.usd_trades++;
    }
  }

  row(): TradeMinuteRow {
    return { ...this.r };
  }
}

export function tradeSpec(rates: QuoteRates): WindowSpec<TradeMessage, Trade, TradeMinuteRow> {
  return {
    validate: validateTrade,
    rates,
    compute: (msg, ts) => ok({ id: msg.id === undefined ? undefined : String(msg.id), price: msg.price, amount: msg.amount, usdRate: rates.rate(msg.pair, ts) }),
    create: () => new TradeMinute(),
  };
}

/** What the event stream shows of a written trades minute (api/stream/): the volume as the market endpoints count it. */
export const tradesStreamed = (r: TradeMinuteRow) => ({ source: 'trades' as const, volume: volume(r), vwap: vwap(r), trades: r.trades });

export function tradesConsumer(kafka: Kafka, deps: ProcessorDeps, opts: { flushIntervalMs?: number } = {}): BatchConsumer {
  return marketConsumer(kafka, deps, { topic: 'md.trades', group: TRADES_GROUP, family: trade, spec: tradeSpec(deps.rates), streamed: tradesStreamed }, opts);
}
