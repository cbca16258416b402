-- The deposit watch skips an account whose amount is what it read last time. An amount can come
-- back to that value (a deposit spent within one pass), so our own transfers out of a wallet mark
-- its account moved when they complete: an account moved since its last read is looked at again
-- whatever its amount.
ALTER TABLE token_watch ADD COLUMN moved_at INTEGER;
