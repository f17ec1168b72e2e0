// The metric families: the market's (read by every market endpoint) and the market
// makers' trusted ones (per wallet). A new family is a definition beside these, its
// tables' migration, and its entry here.
import { book, type BookPartial } from './book.ts';
import { derivative, type DerivativePartial } from './derivative.ts';
import type { Family } from './family.ts';
import { trade, type TradePartial } from './trade.ts';
import { trustedDepth, type TrustedDepthPartial } from './trusted-depth.ts';
import { trustedVolume, type TrustedVolumePartial } from './trusted-volume.ts';

export const FAMILIES = { book, trade, derivative } as const satisfies Record<string, Family>;
export type FamilyName = keyof typeof FAMILIES;

/** Trusted metrics, one series per market maker's wallet (Family.keys). */
export const MM_FAMILIES = { trustedDepth, trustedVolume } as const satisfies Record<string, Family>;

/** The partial each family's window reads give. */
export interface Partials {
  book: BookPartial;
  trade: TradePartial;
  derivative: DerivativePartial;
}

export { book, derivative, trade, trustedDepth, trustedVolume };
export type { BookPartial, DerivativePartial, TradePartial, TrustedDepthPartial, TrustedVolumePartial };
export type { Family, PartialKey, TimeValue } from './family.ts';
