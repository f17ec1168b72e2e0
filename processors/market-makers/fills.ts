// mm.fills -> trusted_volume_minutes (-> hours, days): a market maker's own fills per
// wallet and minute, each fill id once, in USD.
import type { Kafka } from 'kafkajs';
import { trustedVolume } from '../../domain/market/families/index.ts';
import { validateFill, type FillMessage } from '../../schemas/index.ts';
import { marketConsumer, type ProcessorDeps } from '../market/consumer.ts';
import type { WindowSpec } from '../market/windowed-pipeline.ts';
import type { QuoteRates } from '../../domain/market/prices.ts';
import { walletCheck, type KnownWallets } from '../reference-cache.ts';
import type { BatchConsumer } from '../shell/batch-consumer.ts';
import type { Accumulator } from '../shell/minute-windows.ts';
import { ok } from '../shell/outcome.ts';

export const FILLS_GROUP = 'processor.mm-fills';

export interface Fill {
  walletId: number;
  id: string;
  price: number;
  amount: number;
  usdRate: number | null;
}

export interface FillMinuteRow {
  wallet_id: number;
  fills: number;
  amount: number;
  volume_usd: number;
  usd_fills: number;
}

export class FillMinute implements Accumulator<Fill, FillMinuteRow> {
  private readonly r: FillMinuteRow = { wallet_id: 0, fills: 0, amount: 0, volume_usd: 0, usd_fills: 0 };
  private readonly ids = new Set<string>();

  add(f: Fill): void {
    if (this.ids.has(f.id)) return;
    this.ids.add(f.id);
    this.r.wallet_id = f.walletId;
    this.r.fills++;
    this.r.amount += f.amount;
    if (f.usdRate !== null) {
      this.r.volume_usd += f.price * f.amount * f.usdRate;
      this.r.usd_fills++;
    }
  }

  row(): FillMinuteRow {
    return { ...this.r };
  }
}

export function fillsSpec(rates: QuoteRates, wallets: KnownWallets): WindowSpec<FillMessage, Fill, FillMinuteRow> {
  return {
    validate: validateFill,
    series: (msg) => String(msg.wallet_id),
    admit: walletCheck(wallets),
    rates,
    compute: (msg, ts) => ok({ walletId: msg.wallet_id, id: String(msg.id), price: msg.price, amount: msg.amount, usdRate: rates.rate(msg.pair, ts) }),
    create: () => new FillMinute(),
  };
}

export function fillsConsumer(kafka: Kafka, deps: ProcessorDeps & { wallets: KnownWallets }, opts: { flushIntervalMs?: number } = {}): BatchConsumer {
  return marketConsumer(kafka, deps, { topic: 'mm.fills', group: FILLS_GROUP, family: trustedVolume, spec: fillsSpec(deps.rates, deps.wallets) }, opts);
}
