// md.orderbook -> book_minutes (-> book_hours, book_days), then the trusted depth of the
// market makers' minutes that waited for these public mids.
import type { Kafka } from 'kafkajs';
import { book } from '../../domain/market/families/book.ts';
import { TrustedDepthJoin } from '../../domain/market-makers/trusted-depth.ts';
import { validateOrderBook, type OrderBookMessage } from '../../schemas/index.ts';
import { marketConsumer, type ProcessorDeps } from '../market/consumer.ts';
import type { WindowSpec } from '../market/windowed-pipeline.ts';
import { bookMetrics, bookMetricsArrays, bookSkipOf, type BookMetrics } from '../metrics/book.ts';
import type { QuoteRates } from '../../domain/market/prices.ts';
import type { BatchConsumer } from '../shell/batch-consumer.ts';
import { ok, skip } from '../shell/outcome.ts';
import { BookMinute, type BookMinuteRow } from './minute.ts';
import { bookPacking } from './packed.ts';

export const ORDERBOOK_GROUP = 'processor.orderbook';

export function orderBookSpec(rates: QuoteRates): WindowSpec<OrderBookMessage, BookMetrics, BookMinuteRow> {
  // One set of metric arrays for every snapshot: its minute adds a result before the next
  // one is computed (see WindowSpec.compute), so none is allocated per snapshot.
  const arrays = bookMetricsArrays();
  return {
    validate: validateOrderBook,
    rates,
    compute(msg, ts) {
      const m = bookMetrics(msg.bids, msg.asks, rates.rate(msg.pair, ts), arrays);
      if (m === 'empty-side' || m === 'crossed') return skip(m);
      rates.observe(msg.pair, m.mid, ts, msg.exchange);
      return ok(m);
    },
    skipOf(msg) {
      const m = bookSkipOf(msg.bids, msg.asks);
      return m && skip(m);
    },
    create: () => new BookMinute(),
    packing: bookPacking(),
  };
}

/** What the event stream shows of a written book minute (api/stream/). */
export const bookStreamed = (r: BookMinuteRow) => ({ source: 'book' as const, mid: r.mid, spread_bps: r.spread_bps, bid_depth: r.bid_depth, ask_depth: r.ask_depth });

export function orderBookConsumer(kafka: Kafka, deps: ProcessorDeps, opts: { flushIntervalMs?: number; onBatchHandled?: () => void } = {}): BatchConsumer {
  return marketConsumer(
    kafka,
    deps,
    { topic: 'md.orderbook', group: ORDERBOOK_GROUP, family: book, spec: orderBookSpec(deps.rates.saving()), derived: [new TrustedDepthJoin(deps.ch)], streamed: bookStreamed, savesQuoteMids: true },
    opts,
  );
}
