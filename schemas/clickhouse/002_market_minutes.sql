-- Market metrics per minute: one row per (exchange, pair, minute), written once by the
-- processors when the minute closes (its allowed lateness has passed in event time).
-- Hour and day rollups are in 003_market_rollups.sql.
--
-- Exactly once: a retried insert carries the same deduplication token (derived from the
-- minutes it holds, domain/market/repositories/minutes.ts), and the tables are
-- ReplacingMergeTree keyed by minute, read with FINAL, so a minute written twice after a
-- crash still counts once.
--
-- Sort order: an hour of every pair, then pair, exchange and minute. The endpoints read
-- minutes only at the edges of a window, for every pair a caller sees (up to 300 and
-- more): a pair-first order would read a granule per pair and edge; hour-first reads one
-- block. Pair before exchange: a project sees the pairs of its assets, and a pair's
-- symbol starts with its base asset, so an asset's pairs on every exchange lie together
-- (exchange first split them into a run per exchange). Granules of 256 rows: a caller's
-- runs among thousands of other pairs read little beyond their own rows, and a single
-- pair over a month reads one small granule per hour. Stores made with the earlier order
-- (exchange first, 1,024 rows) are moved by 005_market_pair_order.ts.
--
-- A partition a UTC day, merged into one part once all its parts are 15 minutes old: live
-- minutes arrive as a part a minute holding every pair, and in a day's partition they
-- merge with the day's few parts instead of a month's history, so a past day is one part,
-- which FINAL reads without a merging step (ClickHouse merges rows within a partition only).
-- Stores partitioned by month are moved by 006_market_day_partitions.ts.
--
-- Arrays follow the fixed sets of domain/market/facts.ts: 25 levels of L and 10
-- slippage sizes.

CREATE TABLE IF NOT EXISTS book_minutes (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  minute DateTime('UTC'),
  samples UInt32,
  mid Float64,
  first_mid Tuple(DateTime64(3, 'UTC'), Float64),
  last_mid Tuple(DateTime64(3, 'UTC'), Float64),
  spread_abs Float64,
  spread_bps Float64,
  spread_bps_max Float64,
  top Tuple(DateTime64(3, 'UTC'), Float64, Float64, Float64, Float64),
  tick Nullable(Float64),
  depth_samples UInt32,
  bid_depth Array(Float64),
  ask_depth Array(Float64),
  bid_count Array(Float64),
  ask_count Array(Float64),
  min_depth Array(Float64),
  slippage_buy Array(Nullable(Float64)),
  slippage_sell Array(Nullable(Float64)),
  closed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(closed_at)
PARTITION BY toDate(minute)
ORDER BY (toStartOfHour(minute), pair, exchange, minute)
SETTINGS index_granularity = 256, non_replicated_deduplication_window = 10000,
  min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1;

CREATE TABLE IF NOT EXISTS trade_minutes (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  minute DateTime('UTC'),
  trades UInt32,
  amount Float64,
  notional Float64,
  volume_usd Float64,
  usd_trades UInt32,
  closed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(closed_at)
PARTITION BY toDate(minute)
ORDER BY (toStartOfHour(minute), pair, exchange, minute)
SETTINGS index_granularity = 256, non_replicated_deduplication_window = 10000,
  min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1;

-- Latest funding rate and open interest: (event time, value), epoch 0 when none came.
CREATE TABLE IF NOT EXISTS derivative_minutes (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  minute DateTime('UTC'),
  funding Tuple(DateTime64(3, 'UTC'), Float64),
  open_interest Tuple(DateTime64(3, 'UTC'), Float64),
  closed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(closed_at)
PARTITION BY toDate(minute)
ORDER BY (toStartOfHour(minute), pair, exchange, minute)
SETTINGS index_granularity = 256, non_replicated_deduplication_window = 10000,
  min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1;

-- Next offset each processor will handle per partition, written with its minute rows:
-- after a restart or a replay, a message below it that belongs to a closed minute is a
-- re-read (skipped), not a late arrival (dead-lettered).
CREATE TABLE IF NOT EXISTS processor_progress (
  group_id String,
  topic String,
  partition UInt32,
  offset UInt64,
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (group_id, topic, partition);
