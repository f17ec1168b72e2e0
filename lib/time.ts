// Lengths of time in milliseconds, the unit of every instant in the service (epoch ms).
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
