-- Reference data loaded from fixtures (addendum section 2) and the accounts that use it.
-- Mutable rows are ReplacingMergeTree keyed by their natural key, versioned by updated_at;
-- readers use FINAL so an upsert is visible at once.

CREATE TABLE IF NOT EXISTS exchanges (
  slug String,
  name String,
  icon_url String,
  region LowCardinality(String),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY slug;

CREATE TABLE IF NOT EXISTS organizations (
  slug String,
  name String,
  kind Enum8('project' = 1, 'market_maker' = 2),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY slug;

CREATE TABLE IF NOT EXISTS assets (
  symbol String,
  name String,
  owner String,
  labels Array(String),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY symbol;

CREATE TABLE IF NOT EXISTS pairs (
  exchange String,
  pair String,
  asset String,
  market_type Enum8('spot' = 1, 'perp' = 2),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY (exchange, pair);

-- One row per (organization, asset) covered; empty arrays mean "every exchange / pair".
CREATE TABLE IF NOT EXISTS coverage (
  organization String,
  asset String,
  exchanges Array(String),
  pairs Array(String),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY (organization, asset);

CREATE TABLE IF NOT EXISTS wallets (
  id UInt64,
  organization String,
  number UInt32,
  exchange String,
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY id;

CREATE TABLE IF NOT EXISTS users (
  id UInt64,
  email String,
  username String,
  password_hash String,
  first_name String,
  last_name String,
  is_staff Bool,
  is_active Bool,
  created_at DateTime64(3, 'UTC'),
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY id;

CREATE TABLE IF NOT EXISTS memberships (
  user_id UInt64,
  organization String,
  active Bool,
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY (user_id, organization);
