-- How many times each hour of each minute table was written: a row (source, hour, 1) per
-- hour after every rollup recompute of it, and after every minute write into an hour not yet
-- rolled up (domain/market/repositories/rollups.ts), summed by merges.
-- The API caches the rows of sealed buckets (api/market-caches/uptime-rows.ts) and keeps a bucket's rows
-- only while the sum over its hours is the one it read before computing them: any later
-- write into those hours, a late minute or a historical replay, makes the sum grow. A sum
-- of counts never repeats a value, where a timestamp could for two writes in one tick.
-- Written after the rollups, so a write that lands after a reader's sum shows in its next one.
CREATE TABLE IF NOT EXISTS market_writes (
  source LowCardinality(String),
  hour DateTime('UTC'),
  writes UInt64
) ENGINE = SummingMergeTree(writes)
PARTITION BY toYYYYMM(hour)
ORDER BY (source, hour);
