// The fixed sets of the specification (part 2.5, 4.9) and their column names.

/** Level set L: distances from the mid price in bps. */
export const LEVELS_BPS = [0, 0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 300, 500] as const;

/** Depth-uptime amounts (USD) the rollups count at every level. */
export const UPTIME_AMOUNTS_USD = [25_000, 50_000, 100_000, 150_000, 250_000] as const;

/** Slippage order sizes (USD). */
export const SLIPPAGE_SIZES_USD = [100, 1_000, 10_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 5_000_000, 10_000_000] as const;

/** A level as written in column names: no trailing zeros (0.5 -> "0.5", 500 -> "500"). */
export const levelName = (x: number): string => String(x);

export const levelIndex = (bps: number): number => LEVELS_BPS.indexOf(bps as (typeof LEVELS_BPS)[number]);
