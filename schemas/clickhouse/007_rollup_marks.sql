-- How far each family's hours and days are rolled up: a row (source, through) per advance,
-- written by the family's processor (processors/market/sealed-rollups.ts) once every hour
-- before `through` is in the hour rows and every day before it in the day rows. The open
-- hour is rolled up once, after it is sealed, not at every minute close; readers read hour
-- and day rows only before the mark and minute rows after it (domain/market/window.ts), so
-- a processor that lags leaves them reading minutes, never missing rows. A family without
-- a row is rolled up as its minutes are written.
CREATE TABLE IF NOT EXISTS rollup_marks (
  source LowCardinality(String),
  through DateTime('UTC'),
  written_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(written_at)
ORDER BY source;
