-- Metric values market makers report (addendum section 3, "reported-metrics push"):
-- POST /v2/organizations/reported-metrics/ produces each accepted item to mm.reported, and
-- processors/reported/processor.ts writes it here. One row per organization, exchange,
-- pair, interval, metric and bucket start (`timestamp`, aligned to the interval in UTC).
--
-- Latest push wins: pushed_at is the Kafka message's timestamp, which the push endpoint
-- sets to the time it accepted the request. Pushing the same key again writes a row with a
-- later pushed_at, and ReplacingMergeTree(pushed_at), read with FINAL, keeps only that one:
-- a value is replaced, never added. A replayed or re-read message carries its original
-- pushed_at, so it rewrites its own row and never undoes a later push. A retried insert of
-- the same flush carries the same deduplication token (derived from its rows' keys, values
-- and pushed_at, domain/market-makers/reported.ts) and is dropped.
--
-- Sort order: an organization's values of a pair together, then by interval and metric,
-- so the market-maker endpoints read a contiguous range per organization and pair; asset
-- last (a pair has one asset: it is in the key only to be read back without a join).
-- Reported values are few (a value per metric and bucket), so a month's partition is small.

CREATE TABLE IF NOT EXISTS mm_reported (
  organization LowCardinality(String),
  asset LowCardinality(String),
  exchange LowCardinality(String),
  pair LowCardinality(String),
  metric LowCardinality(String),
  interval Enum8('5m' = 1, '1h' = 2, '1d' = 3),
  timestamp DateTime('UTC'),
  value Float64,
  pushed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(pushed_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (organization, exchange, pair, interval, metric, timestamp, asset)
SETTINGS non_replicated_deduplication_window = 10000;
