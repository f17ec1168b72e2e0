-- Hour and day rollups of the minute tables, recomputed by the processors from the minute
-- rows (domain/market/repositories/rollups.ts) rather than fed by materialized views: a
-- view writes its block after the minute block, so a process killed between the two kept the minutes
-- and lost their rollup for good. A recomputed rollup is idempotent: after a crash, the
-- hours of the minutes written since the last recorded progress are computed again, and
-- ReplacingMergeTree(computed_at) keeps the newest row of each bucket.
--
-- Rollups hold sums, counts, minima and maxima, so any window is answered exactly from the
-- coarsest rows that tile it (domain/market/window.ts). Sorted by a coarser time block first
-- (a day of hours, a month of days), then pair and exchange, in granules of 256 rows, and
-- partitioned by that block (a day of hours, a month of days), merged once 15 minutes old,
-- for the same reasons as the minutes (006_market_day_partitions.ts moves older stores).
--
-- The aggregate columns are those of the families' declarations (domain/market/families/),
-- in their order; test/domain/families.test.ts fails when the two drift apart.

CREATE TABLE IF NOT EXISTS book_hours (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  bucket DateTime('UTC'),
  minutes UInt64,
  samples UInt64,
  mid_sum Float64,
  first Tuple(DateTime64(3, 'UTC'), Float64),
  last Tuple(DateTime64(3, 'UTC'), Float64),
  spread_abs_sum Float64,
  spread_bps_sum Float64,
  spread_max Float64,
  last_top Tuple(DateTime64(3, 'UTC'), Float64, Float64, Float64, Float64),
  tick_min Nullable(Float64),
  depth_minutes UInt64,
  bid_depth_sum Array(Float64),
  ask_depth_sum Array(Float64),
  bid_count_sum Array(Float64),
  ask_count_sum Array(Float64),
  spread_up Array(UInt64),
  depth_up Array(UInt64),
  slip_buy_sum Array(Float64),
  slip_buy_n Array(UInt64),
  slip_sell_sum Array(Float64),
  slip_sell_n Array(UInt64),
  computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toDate(bucket)
ORDER BY (toStartOfDay(bucket), pair, exchange, bucket)
SETTINGS index_granularity = 256, min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS book_days AS book_hours
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(bucket)
ORDER BY (toStartOfMonth(bucket), pair, exchange, bucket)
SETTINGS index_granularity = 256, min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS trade_hours (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  bucket DateTime('UTC'),
  trades UInt64,
  amount Float64,
  notional Float64,
  volume_usd Float64,
  usd_trades UInt64,
  computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toDate(bucket)
ORDER BY (toStartOfDay(bucket), pair, exchange, bucket)
SETTINGS index_granularity = 256, min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS trade_days AS trade_hours
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(bucket)
ORDER BY (toStartOfMonth(bucket), pair, exchange, bucket)
SETTINGS index_granularity = 256, min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS derivative_hours (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  bucket DateTime('UTC'),
  funding Tuple(DateTime64(3, 'UTC'), Float64),
  open_interest Tuple(DateTime64(3, 'UTC'), Float64),
  computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toDate(bucket)
ORDER BY (toStartOfDay(bucket), pair, exchange, bucket)
SETTINGS index_granularity = 256, min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS derivative_days AS derivative_hours
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(bucket)
ORDER BY (toStartOfMonth(bucket), pair, exchange, bucket)
SETTINGS index_granularity = 256, min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1;
