// The contracts: JSON Schemas of the Kafka messages and of the fixture file, compiled once.
// Validators and the TypeScript types below describe the same shapes; the schemas are the
// source, the types mirror them for the compiler.
import { Ajv2020, type Options, type ValidateFunction, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { IANAZone } from 'luxon';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseTimestamp, type Timestamp } from './timestamps.ts';
export type { Timestamp } from './timestamps.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const formatsModule = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const readJson = (rel: string): object => JSON.parse(fs.readFileSync(here(rel), 'utf8')) as object;

/** The value of a time parameter as given, with a "+" an unencoded query string lost put back. */
export const withOffsetSign = (s: string): string => s.replace(/ (\d{2}(?::?\d{2})?)$/, '+$1');

export function createAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true, ...options });
  addFormats(ajv, ['email', 'date-time', 'uri']);
  // ISO 8601, UTC when no offset (an unencoded "+05:30" in a query string arrives as " 05:30"),
  // judged as the values are then read: a push's thousand items each have one.
  ajv.addFormat('iso-instant', { type: 'string', validate: (s: string) => parseTimestamp(withOffsetSign(s)) !== undefined });
  ajv.addFormat('time-zone', { type: 'string', validate: (s: string) => IANAZone.isValidZone(s) });
  return ajv;
}

const ajv = createAjv();
ajv.addSchema(readJson('kafka/_defs.schema.json'));

export type Level = [price: number, amount: number];

export interface OrderBookMessage {
  exchange: string;
  pair: string;
  ts: Timestamp;
  bids: Level[];
  asks: Level[];
}

export interface TradeMessage {
  exchange: string;
  pair: string;
  ts: Timestamp;
  price: number;
  amount: number;
  side: 'buy' | 'sell';
  id?: string | number;
}

export interface DerivativesMessage {
  exchange: string;
  pair: string;
  ts: Timestamp;
  funding_rate_8h?: number;
  usd_open_interest?: number;
}

/** A market maker's own open orders on one pair (mm.orders). */
export interface OwnOrdersMessage extends OrderBookMessage {
  organization: string;
  wallet_id: number;
}

/** One fill of a market maker's own order (mm.fills). */
export interface FillMessage {
  organization: string;
  wallet_id: number;
  exchange: string;
  pair: string;
  ts: Timestamp;
  price: number;
  amount: number;
  side: 'buy' | 'sell';
  id: string | number;
}

/** One metric value a market maker reported (mm.reported; the push endpoint produces them). */
export interface ReportedMessage {
  organization: string;
  asset: string;
  exchange: string;
  pair: string;
  metric: string;
  interval: '5m' | '1h' | '1d';
  timestamp: Timestamp;
  value: number;
}

/** One change of a target's status (targets.events). */
export interface TargetEventMessage {
  event_id: string;
  target_id: number;
  type: 'gb' | 'mm';
  organization: string;
  asset: string;
  exchange: string;
  pair: string;
  metric: string;
  market_hours: string | null;
  previous_status: 'unchecked' | 'stable' | 'alert' | 'recovering';
  status: 'unchecked' | 'stable' | 'alert' | 'recovering';
  value: number | null;
  effective_threshold: number;
  direction: 'above' | 'below';
  /** The minute evaluated: the end of the window, ISO 8601. */
  minute: string;
  telegram_notifications: boolean;
}

/** One change of a loan, an RFQ or a proposal: a new version of its record (loans.events, rfq.events). */
export interface AgreementEventMessage {
  event_id: string;
  type: 'loan' | 'rfq' | 'proposal';
  id: number;
  version: number;
  status: string;
  organization: string;
  market_maker: string;
  asset: string;
  /** A proposal's RFQ, or the RFQ a loan was awarded from. */
  rfq: number | null;
  /** When the change was made, ISO 8601. */
  at: string;
  /** The user who made it; 0 for the service's own moves. */
  by: number;
  /** The record's fields as stored (docs/loans.md, docs/rfq.md). */
  record: Record<string, unknown>;
}

/** A pair's minute as a processor wrote it (market.minutes): the book's values or the trades'. */
export interface MinuteEventMessage {
  source: 'book' | 'trades';
  exchange: string;
  pair: string;
  /** The minute's start, epoch ms. */
  minute: number;
  /** When the write was acknowledged, epoch ms. */
  written_at: number;
  mid?: number;
  spread_bps?: number;
  /** USD depth at each level of L; empty without a USD rate. */
  bid_depth?: number[];
  ask_depth?: number[];
  volume?: number | null;
  vwap?: number | null;
  trades?: number;
}

export interface FixtureFile {
  exchanges?: { slug: string; name: string; icon_url?: string; region: string }[];
  organizations?: { slug: string; name: string; kind: 'project' | 'market_maker'; telegram_chat_id?: string | number }[];
  assets?: { symbol: string; name: string; owner: string; labels?: string[] }[];
  pairs?: { exchange: string; pair: string; asset: string; market_type: 'spot' | 'perp' }[];
  coverage?: { organization: string; assets: string[]; exchanges?: string[]; pairs?: string[] }[];
  wallets?: { id: number; organization: string; number: number; exchange: string }[];
  users?: {
    email: string;
    username: string;
    password: string;
    first_name?: string;
    last_name?: string;
    is_staff?: boolean;
    organizations?: string[];
  }[];
}

export const validateOrderBook = ajv.compile<OrderBookMessage>(readJson('kafka/md.orderbook.schema.json'));
export const validateTrade = ajv.compile<TradeMessage>(readJson('kafka/md.trades.schema.json'));
export const validateDerivatives = ajv.compile<DerivativesMessage>(readJson('kafka/md.derivatives.schema.json'));
export const validateOwnOrders = ajv.compile<OwnOrdersMessage>(readJson('kafka/mm.orders.schema.json'));
export const validateFill = ajv.compile<FillMessage>(readJson('kafka/mm.fills.schema.json'));
export const validateReported = ajv.compile<ReportedMessage>(readJson('kafka/mm.reported.schema.json'));
export const validateTargetEvent = ajv.compile<TargetEventMessage>(readJson('kafka/targets.events.schema.json'));
export const validateLoanEvent = ajv.compile<AgreementEventMessage>(readJson('kafka/loans.events.schema.json'));
export const validateRfqEvent = ajv.compile<AgreementEventMessage>(readJson('kafka/rfq.events.schema.json'));
export const validateMinuteEvent = ajv.compile<MinuteEventMessage>(readJson('kafka/market.minutes.schema.json'));
export const validateFixture = ajv.compile<FixtureFile>(readJson('fixture.schema.json'));

/** One line naming what is wrong, for dead-letter reasons and fixture errors. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'invalid';
  return errors
    .slice(0, 5)
    .map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`)
    .join('; ');
}

export type { ValidateFunction };
