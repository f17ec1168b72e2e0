-- The open hour's rows so far, per market family: the hour's rollup of its minutes before a
-- mark inside it, written every few minutes by the family's processor
-- (processors/market/sealed-rollups.ts) before it moves its mark there (007). A window
-- then reads the open hour from the row of the mark it planned with, and minute rows only
-- after the mark (domain/market/window.ts), wherever in the hour it is asked.
--
-- A row's `bucket` is the mark, not the hour: each mark has its own rows, so a reader
-- still planning with an earlier mark reads the rows of that mark, never rows covering
-- minutes it also reads from the minute table. Rows are needed for minutes only (readers
-- move on with the next mark, and use no mark older than an hour: RolledUp), so they are
-- deleted two hours after they were computed. Granules of 256 rows, as the other market
-- tables: a mark's rows are every pair's, and a project's pairs are a few granules of them.
CREATE TABLE IF NOT EXISTS book_open_hours AS book_hours
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toDate(bucket)
ORDER BY (bucket, pair, exchange)
TTL toDateTime(computed_at) + INTERVAL 2 HOUR
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS trade_open_hours AS trade_hours
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toDate(bucket)
ORDER BY (bucket, pair, exchange)
TTL toDateTime(computed_at) + INTERVAL 2 HOUR
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS derivative_open_hours AS derivative_hours
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toDate(bucket)
ORDER BY (bucket, pair, exchange)
TTL toDateTime(computed_at) + INTERVAL 2 HOUR
SETTINGS index_granularity = 256;
