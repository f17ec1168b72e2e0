-- Telegram notifications of target status changes (docs/targets.md): the chat each
-- organization's notifications go to (fixture `telegram_chat_id`), and the events already
-- sent, so an event is sent once, also after a restart or a repeat on targets.events.
ALTER TABLE organizations ADD COLUMN IF NOT EXISTS telegram_chat_id String DEFAULT '';

CREATE TABLE IF NOT EXISTS notifications_sent (
  channel LowCardinality(String),
  event_id String,
  sent_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(sent_at)
ORDER BY (channel, event_id);
