// mm.orders -> mm_order_minutes (-> trusted_depth_minutes, -> its hours and days): a
// market maker's own open orders per wallet and minute. The levels are kept with their
// USD amounts summed over the minute's snapshots, because depth at L is measured against
// the public mid of the minute, which may be written later (domain/market-makers/trusted-depth.ts).
import type { Kafka } from 'kafkajs';
import { TrustedDepthJoin } from '../../domain/market-makers/trusted-depth.ts';
import { validateOwnOrders, type Level, type OwnOrdersMessage } from '../../schemas/index.ts';
import { marketConsumer, type ProcessorDeps } from '../market/consumer.ts';
import type { WindowSpec } from '../market/windowed-pipeline.ts';
import type { QuoteRates } from '../../domain/market/prices.ts';
import { walletCheck, type KnownWallets } from '../reference-cache.ts';
import type { BatchConsumer } from '../shell/batch-consumer.ts';
import type { Accumulator } from '../shell/minute-windows.ts';
import { ok } from '../shell/outcome.ts';

export const OWN_ORDERS_GROUP = 'processor.mm-orders';

/** The raw minute table: no rollups of its own, trusted depth derives from it. */
export const OWN_ORDER_MINUTES = { tables: { minutes: 'mm_order_minutes' }, keys: ['wallet_id'] } as const;

export interface OwnOrders {
  walletId: number;
  bids: Level[];
  asks: Level[];
  /** Quote currency to USD; null when unknown (the snapshot then counts in samples only). */
  usdRate: number | null;
}

export interface OwnOrderMinuteRow {
  wallet_id: number;
  samples: number;
  usd_samples: number;
  bid_prices: number[];
  bid_usd: number[];
  ask_prices: number[];
  ask_usd: number[];
}

export class OwnOrderMinute implements Accumulator<OwnOrders, OwnOrderMinuteRow> {
  private walletId = 0;
  private samples = 0;
  private usdSamples = 0;
  private readonly bids = new Map<number, number>();
  private readonly asks = new Map<number, number>();

  add(o: OwnOrders): void {
    this.walletId = o.walletId;
    this.samples++;
    if (o.usdRate === null) return;
    this.usdSamples++;
    for (const [price, amount] of o.bids) this.bids.set(price, (this.bids.get(price) ?? 0) + price * amount * o.usdRate);
    for (const [price, amount] of o.asks) this.asks.set(price, (this.asks.get(price) ?? 0) + price * amount * o.usdRate);
  }

  row(): OwnOrderMinuteRow {
    const sorted = (m: Map<number, number>) => [...m].sort((a, b) => a[0] - b[0]);
    const bids = sorted(this.bids);
    const asks = sorted(this.asks);
    return {
      wallet_id: this.walletId,
      samples: this.samples,
      usd_samples: this.usdSamples,
      bid_prices: bids.map((x) => x[0]),
      bid_usd: bids.map((x) => x[1]),
      ask_prices: asks.map((x) => x[0]),
      ask_usd: asks.map((x) => x[1]),
    };
  }
}

export function ownOrdersSpec(rates: QuoteRates, wallets: KnownWallets): WindowSpec<OwnOrdersMessage, OwnOrders, OwnOrderMinuteRow> {
  return {
    validate: validateOwnOrders,
    series: (msg) => String(msg.wallet_id),
    admit: walletCheck(wallets),
    rates,
    compute: (msg, ts) => ok({ walletId: msg.wallet_id, bids: msg.bids, asks: msg.asks, usdRate: rates.rate(msg.pair, ts) }),
    create: () => new OwnOrderMinute(),
  };
}

export function ownOrdersConsumer(kafka: Kafka, deps: ProcessorDeps & { wallets: KnownWallets }, opts: { flushIntervalMs?: number } = {}): BatchConsumer {
  return marketConsumer(
    kafka,
    deps,
    { topic: 'mm.orders', group: OWN_ORDERS_GROUP, family: OWN_ORDER_MINUTES, spec: ownOrdersSpec(deps.rates, deps.wallets), derived: [new TrustedDepthJoin(deps.ch)] },
    opts,
  );
}
