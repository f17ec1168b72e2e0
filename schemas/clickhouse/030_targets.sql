-- Targets (specification 2.4, addendum section 6).
--
-- `targets` holds their definitions, one row per version of a target. A batch
-- (POST /v2/organizations/targets/batch/) writes all of its rows, the new targets and a
-- tombstone (deleted = 1) of each target it deletes, in ONE insert: the table is not
-- partitioned, so the insert is one part, which ClickHouse commits whole or not at all,
-- also when the process dies during it. Readers take the newest version of each id
-- (FINAL) and skip tombstones.
--
-- `target_states` holds what the evaluator keeps current (status, the `updates` history,
-- effective threshold, current price, scaling factor). A separate table, so the evaluator
-- never writes a definition and can never bring back a deleted target.
CREATE TABLE IF NOT EXISTS targets (
  id UInt64,
  type Enum8('gb' = 1, 'mm' = 2),
  organization String,
  asset String,
  exchange String,
  pair String,
  metric String,
  threshold Float64,
  direction Enum8('above' = 1, 'below' = 2),
  active Bool,
  telegram_notifications Bool,
  scaling_mode Enum8('legacy' = 1, 'price' = 2),
  scaling_enabled Bool,
  scaling_source Enum8('asset_twap_24h' = 1, 'loan_twap' = 2, 'manual' = 3),
  scaling_reference_price Float64,
  -- '' for a target of all hours (`default` in the list's filter).
  market_hours LowCardinality(String),
  created_at DateTime64(3, 'UTC'),
  created_by UInt64,
  batch_id String,
  deleted Bool,
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY id;

CREATE TABLE IF NOT EXISTS target_states (
  id UInt64,
  status Enum8('unchecked' = 0, 'stable' = 1, 'alert' = 2, 'recovering' = 3),
  updates Array(Tuple(status String, updated_at DateTime64(3, 'UTC'))),
  met_streak UInt32,
  effective_threshold Float64,
  current_price Nullable(Float64),
  scaling_factor Float64,
  evaluated_at DateTime64(3, 'UTC'),
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY id;
