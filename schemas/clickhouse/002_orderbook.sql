-- Order-book metrics. Each snapshot is one row keyed by (exchange, pair, ts): a snapshot
-- consumed twice (restart, replay) collapses to one. Minute rows are recomputed from the
-- deduplicated snapshots of that minute and keyed by (exchange, pair, minute), so
-- recomputing a minute replaces it instead of adding to it.

CREATE TABLE IF NOT EXISTS orderbook_snapshots (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  ts DateTime64(3, 'UTC'),
  best_bid Float64,
  best_bid_amount Float64,
  best_ask Float64,
  best_ask_amount Float64,
  mid Float64,
  spread_abs Float64,
  spread_bps Float64,
  bid_levels UInt16,
  ask_levels UInt16,
  ingested_at DateTime64(3, 'UTC') DEFAULT now64(3)
) ENGINE = ReplacingMergeTree
ORDER BY (exchange, pair, ts)
-- Snapshots are kept as long as Kafka keeps the topic (7 days) plus a margin, so any
-- replay Kafka can serve finds the rest of its minutes here. Counted from ingestion, not
-- event time, so a historical file replayed today is not dropped at once.
TTL toDateTime(ingested_at) + INTERVAL 14 DAY;

CREATE TABLE IF NOT EXISTS orderbook_minutes (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  minute DateTime('UTC'),
  samples UInt32,
  mid Float64,
  first_mid Float64,
  last_mid Float64,
  spread_abs Float64,
  spread_bps Float64,
  spread_bps_max Float64,
  best_bid Float64,
  best_bid_amount Float64,
  best_ask Float64,
  best_ask_amount Float64,
  computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
ORDER BY (exchange, pair, minute);
