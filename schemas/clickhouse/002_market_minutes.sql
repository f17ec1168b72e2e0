-- Market metrics per minute, rolled up by hour and by day.
--
-- The processors aggregate each (exchange, pair, minute) in memory and write its row once,
-- when the minute closes (its allowed lateness has passed in event time). Minute rows are
-- keyed by (exchange, pair, minute); a retried insert carries the same deduplication token,
-- which also keeps the materialized views below from counting it twice. The rollups keep
-- sums, counts, minima and maxima, so any window is answered exactly from the coarsest
-- rows that tile it (see api/market/).
--
-- Arrays follow the fixed sets of processors/metrics/levels.ts: 25 levels of L, then the
-- 5 depth-uptime amounts x 25 levels (amount-major), and 10 slippage sizes.

DROP TABLE IF EXISTS orderbook_minutes;
DROP TABLE IF EXISTS orderbook_snapshots;

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
PARTITION BY toYYYYMM(minute)
ORDER BY (exchange, pair, minute)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS book_hours (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  bucket DateTime('UTC'),
  minutes SimpleAggregateFunction(sum, UInt64),
  samples SimpleAggregateFunction(sum, UInt64),
  mid_sum SimpleAggregateFunction(sum, Float64),
  first SimpleAggregateFunction(min, Tuple(DateTime64(3, 'UTC'), Float64)),
  last SimpleAggregateFunction(max, Tuple(DateTime64(3, 'UTC'), Float64)),
  spread_abs_sum SimpleAggregateFunction(sum, Float64),
  spread_bps_sum SimpleAggregateFunction(sum, Float64),
  spread_max SimpleAggregateFunction(max, Float64),
  last_top SimpleAggregateFunction(max, Tuple(DateTime64(3, 'UTC'), Float64, Float64, Float64, Float64)),
  tick_min SimpleAggregateFunction(min, Nullable(Float64)),
  depth_minutes SimpleAggregateFunction(sum, UInt64),
  bid_depth_sum AggregateFunction(sumForEach, Array(Float64)),
  ask_depth_sum AggregateFunction(sumForEach, Array(Float64)),
  bid_count_sum AggregateFunction(sumForEach, Array(Float64)),
  ask_count_sum AggregateFunction(sumForEach, Array(Float64)),
  spread_up AggregateFunction(sumForEach, Array(UInt64)),
  depth_up AggregateFunction(sumForEach, Array(UInt64)),
  slip_buy_sum AggregateFunction(sumForEach, Array(Float64)),
  slip_buy_n AggregateFunction(sumForEach, Array(UInt64)),
  slip_sell_sum AggregateFunction(sumForEach, Array(Float64)),
  slip_sell_n AggregateFunction(sumForEach, Array(UInt64))
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (exchange, pair, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS book_days AS book_hours
ENGINE = AggregatingMergeTree
PARTITION BY toYear(bucket)
ORDER BY (exchange, pair, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS book_hours_mv TO book_hours AS
SELECT exchange, pair, toStartOfHour(minute) AS bucket,
  count() AS minutes,
  sum(samples) AS samples,
  sum(mid) AS mid_sum,
  min(first_mid) AS first,
  max(last_mid) AS last,
  sum(spread_abs) AS spread_abs_sum,
  sum(spread_bps) AS spread_bps_sum,
  max(spread_bps_max) AS spread_max,
  max(top) AS last_top,
  min(tick) AS tick_min,
  countIf(depth_samples > 0) AS depth_minutes,
  sumForEachState(bid_depth) AS bid_depth_sum,
  sumForEachState(ask_depth) AS ask_depth_sum,
  sumForEachState(bid_count) AS bid_count_sum,
  sumForEachState(ask_count) AS ask_count_sum,
  sumForEachState(arrayMap(l -> toUInt64(spread_bps_max <= l), [0, 0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 300, 500])) AS spread_up,
  sumForEachState(arrayFlatten(arrayMap(a -> arrayMap(i -> toUInt64(min_depth[i] > a), range(1, 26)), [25000, 50000, 100000, 150000, 250000]))) AS depth_up,
  sumForEachState(arrayMap(x -> ifNull(x, 0.), slippage_buy)) AS slip_buy_sum,
  sumForEachState(arrayMap(x -> toUInt64(isNotNull(x)), slippage_buy)) AS slip_buy_n,
  sumForEachState(arrayMap(x -> ifNull(x, 0.), slippage_sell)) AS slip_sell_sum,
  sumForEachState(arrayMap(x -> toUInt64(isNotNull(x)), slippage_sell)) AS slip_sell_n
FROM book_minutes
GROUP BY exchange, pair, bucket;

CREATE MATERIALIZED VIEW IF NOT EXISTS book_days_mv TO book_days AS
SELECT exchange, pair, toStartOfDay(minute) AS bucket,
  count() AS minutes,
  sum(samples) AS samples,
  sum(mid) AS mid_sum,
  min(first_mid) AS first,
  max(last_mid) AS last,
  sum(spread_abs) AS spread_abs_sum,
  sum(spread_bps) AS spread_bps_sum,
  max(spread_bps_max) AS spread_max,
  max(top) AS last_top,
  min(tick) AS tick_min,
  countIf(depth_samples > 0) AS depth_minutes,
  sumForEachState(bid_depth) AS bid_depth_sum,
  sumForEachState(ask_depth) AS ask_depth_sum,
  sumForEachState(bid_count) AS bid_count_sum,
  sumForEachState(ask_count) AS ask_count_sum,
  sumForEachState(arrayMap(l -> toUInt64(spread_bps_max <= l), [0, 0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 300, 500])) AS spread_up,
  sumForEachState(arrayFlatten(arrayMap(a -> arrayMap(i -> toUInt64(min_depth[i] > a), range(1, 26)), [25000, 50000, 100000, 150000, 250000]))) AS depth_up,
  sumForEachState(arrayMap(x -> ifNull(x, 0.), slippage_buy)) AS slip_buy_sum,
  sumForEachState(arrayMap(x -> toUInt64(isNotNull(x)), slippage_buy)) AS slip_buy_n,
  sumForEachState(arrayMap(x -> ifNull(x, 0.), slippage_sell)) AS slip_sell_sum,
  sumForEachState(arrayMap(x -> toUInt64(isNotNull(x)), slippage_sell)) AS slip_sell_n
FROM book_minutes
GROUP BY exchange, pair, bucket;

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
PARTITION BY toYYYYMM(minute)
ORDER BY (exchange, pair, minute)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS trade_hours (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  bucket DateTime('UTC'),
  trades UInt64,
  amount Float64,
  notional Float64,
  volume_usd Float64,
  usd_trades UInt64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (exchange, pair, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS trade_days AS trade_hours
ENGINE = SummingMergeTree
PARTITION BY toYear(bucket)
ORDER BY (exchange, pair, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS trade_hours_mv TO trade_hours AS
SELECT exchange, pair, toStartOfHour(minute) AS bucket,
  sum(trades) AS trades, sum(amount) AS amount, sum(notional) AS notional, sum(volume_usd) AS volume_usd, sum(usd_trades) AS usd_trades
FROM trade_minutes GROUP BY exchange, pair, bucket;

CREATE MATERIALIZED VIEW IF NOT EXISTS trade_days_mv TO trade_days AS
SELECT exchange, pair, toStartOfDay(minute) AS bucket,
  sum(trades) AS trades, sum(amount) AS amount, sum(notional) AS notional, sum(volume_usd) AS volume_usd, sum(usd_trades) AS usd_trades
FROM trade_minutes GROUP BY exchange, pair, bucket;

-- Latest funding rate and open interest: (event time, value), epoch 0 when none came.
CREATE TABLE IF NOT EXISTS derivative_minutes (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  minute DateTime('UTC'),
  funding Tuple(DateTime64(3, 'UTC'), Float64),
  open_interest Tuple(DateTime64(3, 'UTC'), Float64),
  closed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(closed_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (exchange, pair, minute)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS derivative_hours (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  bucket DateTime('UTC'),
  funding SimpleAggregateFunction(max, Tuple(DateTime64(3, 'UTC'), Float64)),
  open_interest SimpleAggregateFunction(max, Tuple(DateTime64(3, 'UTC'), Float64))
) ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (exchange, pair, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS derivative_days AS derivative_hours
ENGINE = AggregatingMergeTree
PARTITION BY toYear(bucket)
ORDER BY (exchange, pair, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS derivative_hours_mv TO derivative_hours AS
SELECT exchange, pair, toStartOfHour(minute) AS bucket, max(funding) AS funding, max(open_interest) AS open_interest
FROM derivative_minutes GROUP BY exchange, pair, bucket;

CREATE MATERIALIZED VIEW IF NOT EXISTS derivative_days_mv TO derivative_days AS
SELECT exchange, pair, toStartOfDay(minute) AS bucket, max(funding) AS funding, max(open_interest) AS open_interest
FROM derivative_minutes GROUP BY exchange, pair, bucket;

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
