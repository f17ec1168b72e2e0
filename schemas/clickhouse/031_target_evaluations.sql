-- Every evaluation of every active target (addendum section 6; docs/targets.md): the
-- value over its window, the effective threshold, whether it was met, and the status
-- after it. Keyed by target and minute: evaluating a minute again after a crash rewrites
-- the same rows. Read by GET /v2/organizations/targets/<id>/evaluations/ and by the
-- loans' KPI shares. Kept 90 days.
CREATE TABLE IF NOT EXISTS target_evaluations (
  id UInt64,
  minute DateTime('UTC'),
  value Nullable(Float64),
  effective_threshold Float64,
  met Nullable(Bool),
  status Enum8('unchecked' = 0, 'stable' = 1, 'alert' = 2, 'recovering' = 3),
  evaluated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(evaluated_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (id, minute)
TTL minute + INTERVAL 90 DAY;
