-- A fund request is fulfilled only by money that landed after it was asked (issue 40): the request
-- keeps the newest transaction of the wallet's USDC account when it was made, and becomes
-- `armed` once the deposit watch has handled that transaction, or a transaction of a later slot
-- (the watch may have passed the first already), so every deposit the watch records from then on
-- is later on chain. Requests made before this migration stay armed (as before).
ALTER TABLE fund_requests ADD COLUMN after_signature TEXT;             -- NULL: the account had no transaction
ALTER TABLE fund_requests ADD COLUMN after_slot INTEGER;               -- that transaction's slot
ALTER TABLE fund_requests ADD COLUMN armed INTEGER NOT NULL DEFAULT 1 CHECK (armed IN (0, 1));
