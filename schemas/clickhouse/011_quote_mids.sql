-- The mids of the pairs that convert another quote currency to USD (<QUOTE>/USDT,
-- <QUOTE>/USD), as the books' processor saw them, by event time (domain/market/prices.ts): a
-- restart loads the recent ones, so the messages it reads again are converted as the first
-- time. Written with the processor's progress, read only at a start; kept a week after it
-- was saved (not after its event time: a backfill of older data is saved too).
CREATE TABLE IF NOT EXISTS quote_mids (
  exchange LowCardinality(String),
  pair LowCardinality(String),
  ts DateTime64(3, 'UTC'),
  mid Float64,
  saved_at DateTime('UTC')
) ENGINE = ReplacingMergeTree
ORDER BY (pair, exchange, ts)
TTL saved_at + INTERVAL 7 DAY;
