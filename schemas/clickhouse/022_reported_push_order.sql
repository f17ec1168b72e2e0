-- The order of two pushes of one key in the same millisecond (equal pushed_at): the endpoints
-- read mm_reported's latest value of a key by argMax over (pushed_at, seq) instead of FINAL
-- (docs/benchmarks.md: FINAL cost most of the read), and argMax alone would take either of
-- two rows of equal pushed_at, where FINAL keeps the later inserted. seq is the Kafka offset
-- of the message the row came from: a key's messages share a partition, so the later push
-- has the greater offset, and a replayed message writes its row again with the same one.
-- Rows written before this column existed read 0.
ALTER TABLE mm_reported ADD COLUMN IF NOT EXISTS seq UInt64 DEFAULT 0;
