-- Trusted metrics (addendum section 4): what a market maker's own exchange accounts show,
-- per wallet, pair and minute, with hour and day rollups like the market's (003). The
-- aggregate columns of the rollups are the families' declarations
-- (domain/market/families/trusted-depth.ts, trusted-volume.ts); test/domain/families.test.ts
-- holds the two together. Exactly once as for the market's minutes (002): deduplicated
-- retried inserts, ReplacingMergeTree read with FINAL.

-- A wallet's own open orders in a minute, as price levels with their USD amounts summed
-- over the minute's snapshots (those with a USD rate: usd_samples). Kept until the public
-- book's mid of the same minute is known: trusted depth at L counts the levels within L of
-- that mid (domain/market-makers/trusted-depth.ts), so it cannot be computed before.
CREATE TABLE IF NOT EXISTS mm_order_minutes (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  wallet_id UInt64,
  minute DateTime('UTC'),
  samples UInt32,
  usd_samples UInt32,
  bid_prices Array(Float64),
  bid_usd Array(Float64),
  ask_prices Array(Float64),
  ask_usd Array(Float64),
  closed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(closed_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (toStartOfHour(minute), exchange, pair, wallet_id, minute)
SETTINGS non_replicated_deduplication_window = 10000;

-- A wallet's mean depth at every level of L in a minute, against the public mid of that minute.
CREATE TABLE IF NOT EXISTS trusted_depth_minutes (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  wallet_id UInt64,
  minute DateTime('UTC'),
  mid Float64,
  bid_depth Array(Float64),
  ask_depth Array(Float64),
  closed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(closed_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (toStartOfHour(minute), exchange, pair, wallet_id, minute)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS trusted_depth_hours (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  wallet_id UInt64,
  bucket DateTime('UTC'),
  minutes UInt64,
  bid_depth_sum Array(Float64),
  ask_depth_sum Array(Float64),
  computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(bucket)
ORDER BY (toStartOfDay(bucket), exchange, pair, wallet_id, bucket);

CREATE TABLE IF NOT EXISTS trusted_depth_days (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  wallet_id UInt64,
  bucket DateTime('UTC'),
  minutes UInt64,
  bid_depth_sum Array(Float64),
  ask_depth_sum Array(Float64),
  computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(bucket)
ORDER BY (toStartOfMonth(bucket), exchange, pair, wallet_id, bucket);

-- A wallet's fills in a minute: each fill id once; USD volume over the fills with a USD rate.
CREATE TABLE IF NOT EXISTS trusted_volume_minutes (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  wallet_id UInt64,
  minute DateTime('UTC'),
  fills UInt32,
  amount Float64,
  volume_usd Float64,
  usd_fills UInt32,
  closed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(closed_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (toStartOfHour(minute), exchange, pair, wallet_id, minute)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS trusted_volume_hours (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  wallet_id UInt64,
  bucket DateTime('UTC'),
  fills UInt64,
  volume_usd Float64,
  usd_fills UInt64,
  computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(bucket)
ORDER BY (toStartOfDay(bucket), exchange, pair, wallet_id, bucket);

CREATE TABLE IF NOT EXISTS trusted_volume_days (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  wallet_id UInt64,
  bucket DateTime('UTC'),
  fills UInt64,
  volume_usd Float64,
  usd_fills UInt64,
  computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(bucket)
ORDER BY (toStartOfMonth(bucket), exchange, pair, wallet_id, bucket);
