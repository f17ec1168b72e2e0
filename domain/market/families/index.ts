// The market's metric families. A new family is a definition beside these, its tables'
// migration, and its entry here.
import { book, type BookPartial } from './book.ts';
import { derivative, type DerivativePartial } from './derivative.ts';
import type { Family } from './family.ts';
import { trade, type TradePartial } from './trade.ts';

export const FAMILIES = { book, trade, derivative } as const satisfies Record<string, Family>;
export type FamilyName = keyof typeof FAMILIES;

/** The partial each family's window reads give. */
export interface Partials {
  book: BookPartial;
  trade: TradePartial;
  derivative: DerivativePartial;
}

export { book, derivative, trade };
export type { BookPartial, DerivativePartial, TradePartial };
export type { Family, PartialKey, TimeValue } from './family.ts';
