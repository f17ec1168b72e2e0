// md.derivatives -> derivative_minutes (-> hours, days): the latest funding rate (8h) and
// USD open interest of each minute, by event time.
import type { Kafka } from 'kafkajs';
import { derivative } from '../../domain/market/families/derivative.ts';
import { validateDerivatives, type DerivativesMessage } from '../../schemas/index.ts';
import { marketConsumer, type ProcessorDeps } from '../market/consumer.ts';
import type { WindowSpec } from '../market/windowed-pipeline.ts';
import type { BatchConsumer } from '../shell/batch-consumer.ts';
import type { Accumulator } from '../shell/minute-windows.ts';
import { ok } from '../shell/outcome.ts';

export const DERIVATIVES_GROUP = 'processor.derivatives';

export interface DerivativeMinuteRow {
  /** (event time ms, value); time 0 when the minute had none. */
  funding: [number, number];
  open_interest: [number, number];
}

export class DerivativeMinute implements Accumulator<DerivativesMessage, DerivativeMinuteRow> {
  private readonly r: DerivativeMinuteRow = { funding: [0, 0], open_interest: [0, 0] };

  add(m: DerivativesMessage, ts: number): void {
    if (m.funding_rate_8h !== undefined && ts >= this.r.funding[0]) this.r.funding = [ts, m.funding_rate_8h];
    if (m.usd_open_interest !== undefined && ts >= this.r.open_interest[0]) this.r.open_interest = [ts, m.usd_open_interest];
  }

  row(): DerivativeMinuteRow {
    return { funding: this.r.funding, open_interest: this.r.open_interest };
  }
}

export const derivativesSpec: WindowSpec<DerivativesMessage, DerivativesMessage, DerivativeMinuteRow> = {
  validate: validateDerivatives,
  compute: (msg) => ok(msg),
  create: () => new DerivativeMinute(),
};

export function derivativesConsumer(kafka: Kafka, deps: ProcessorDeps, opts: { flushIntervalMs?: number } = {}): BatchConsumer {
  return marketConsumer(kafka, deps, { topic: 'md.derivatives', group: DERIVATIVES_GROUP, family: derivative, spec: derivativesSpec }, opts);
}
