-- The in-flight payment holding a recipient's setup fee (setupFeeHolder) and the one holding a
-- paylink (paylinkHolder) are looked up on every message built for such a recipient or paylink.
-- Without these indexes SQLite walks every open intent through transactions_status, which costs
-- in proportion to the open intents (0.7 ms at 6,500 of them, twice per payment). Both are
-- partial: only rows with a setup fee, or with a paylink, are indexed.
CREATE INDEX transactions_setup_fee_holder ON transactions(to_address) WHERE setup_fee > 0 AND direction = 'out';
CREATE INDEX transactions_paylink ON transactions(payment_request_id) WHERE payment_request_id IS NOT NULL;
