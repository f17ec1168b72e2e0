-- A minute's mid in USD (the mean over its snapshots with a USD rate of mid x rate), and its
-- sums in the rollups: an asset's price is the mean of the minute mids in USD over all its
-- pairs (addendum section 7), a pair quoted in another currency too (domain/market/prices.ts).
-- Rows written before hold none: a USD-quoted pair's price is read from its mids, which are
-- USD already.
ALTER TABLE book_minutes ADD COLUMN IF NOT EXISTS mid_usd Nullable(Float64) AFTER mid;
ALTER TABLE book_hours ADD COLUMN IF NOT EXISTS usd_mid_sum Float64 AFTER slip_sell_n;
ALTER TABLE book_hours ADD COLUMN IF NOT EXISTS usd_mid_minutes UInt64 AFTER usd_mid_sum;
ALTER TABLE book_days ADD COLUMN IF NOT EXISTS usd_mid_sum Float64 AFTER slip_sell_n;
ALTER TABLE book_days ADD COLUMN IF NOT EXISTS usd_mid_minutes UInt64 AFTER usd_mid_sum;
ALTER TABLE book_open_hours ADD COLUMN IF NOT EXISTS usd_mid_sum Float64 AFTER slip_sell_n;
ALTER TABLE book_open_hours ADD COLUMN IF NOT EXISTS usd_mid_minutes UInt64 AFTER usd_mid_sum;
