-- Account security (issue 4): two-factor secrets, API keys, passkeys. Durable state only;
-- challenges, ceremonies, used codes, lockouts, throttles and locks live in Redis.
-- Same pattern as 001: ReplacingMergeTree keyed by the natural key, versioned by
-- updated_at (the storage clock), read with FINAL. State that changes on every use (key
-- last use, passkey signature counter) has a table of its own, so a write on use can never
-- bring back a key or passkey that was revoked or removed in the meantime.

-- One row per user. Setup writes an unconfirmed secret, confirmation sets confirmed,
-- disabling writes confirmed = false with the secret cleared.
CREATE TABLE IF NOT EXISTS totp_devices (
  user_id UInt64,
  secret String,
  confirmed Bool,
  updated_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY user_id;

-- The key itself is never stored: key_hash is the hex SHA-256 of the whole key string.
-- prefix is the key's public identifier (the first characters of the key).
CREATE TABLE IF NOT EXISTS api_keys (
  id UInt64,
  user_id UInt64,
  name String,
  prefix String,
  key_hash String,
  scopes Array(LowCardinality(String)),
  created_at DateTime64(3, 'UTC'),
  expires_at DateTime64(3, 'UTC'),
  revoked_at Nullable(DateTime64(3, 'UTC')),
  updated_at DateTime64(3, 'UTC'),
  INDEX api_keys_prefix prefix TYPE bloom_filter GRANULARITY 1
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY id;

-- Written at most once a minute per key (debounced in Redis); the latest use wins.
CREATE TABLE IF NOT EXISTS api_key_usage (
  key_id UInt64,
  last_used_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(last_used_at) ORDER BY key_id;

-- credential_id and public_key (COSE) are base64url, as WebAuthn hands them over.
CREATE TABLE IF NOT EXISTS passkeys (
  id UInt64,
  user_id UInt64,
  credential_id String,
  public_key String,
  name String,
  transports Array(String),
  created_at DateTime64(3, 'UTC'),
  deleted_at Nullable(DateTime64(3, 'UTC')),
  updated_at DateTime64(3, 'UTC'),
  INDEX passkeys_credential credential_id TYPE bloom_filter GRANULARITY 1
) ENGINE = ReplacingMergeTree(updated_at) ORDER BY id;

-- The signature counter at registration (used_at null) and after each sign-in; the highest
-- counter wins (it only grows; with equal counters, as for authenticators that keep none,
-- the last row written).
CREATE TABLE IF NOT EXISTS passkey_counters (
  passkey_id UInt64,
  counter UInt64,
  used_at Nullable(DateTime64(3, 'UTC'))
) ENGINE = ReplacingMergeTree(counter) ORDER BY passkey_id;
