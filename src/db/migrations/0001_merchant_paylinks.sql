-- Schema 2: merchants create paylinks too. payment_requests gains merchant_id and wallet_id becomes
-- optional (exactly one is set). SQLite cannot change a column's constraints in place, so the table
-- is rebuilt (the migration runner turns foreign keys off for the step and checks every reference
-- before it commits: the rejections and invitations find their request_id under the old name).

CREATE TABLE payment_requests_v2 (
  request_id     TEXT PRIMARY KEY,
  short_code     TEXT NOT NULL UNIQUE,
  wallet_id      TEXT REFERENCES wallets(wallet_id),
  merchant_id    TEXT REFERENCES merchants(merchant_id),
  description    TEXT NOT NULL,
  amount         INTEGER CHECK (amount IS NULL OR amount > 0),
  items          TEXT,
  reference      TEXT,
  reference_key  TEXT NOT NULL UNIQUE,
  reveal_owner   INTEGER NOT NULL DEFAULT 0 CHECK (reveal_owner IN (0, 1)),
  status         TEXT NOT NULL CHECK (status IN ('open', 'paid', 'cancelled', 'expired')),
  paid_amount    INTEGER,
  payer          TEXT,
  paid_via       TEXT CHECK (paid_via IN ('wallet', 'solana_pay')),
  signature      TEXT,
  transaction_id TEXT,
  scan_cursor    TEXT,
  next_scan_at   INTEGER NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  paid_at        INTEGER,
  CHECK ((wallet_id IS NULL) <> (merchant_id IS NULL))
) STRICT;

INSERT INTO payment_requests_v2 (request_id, short_code, wallet_id, merchant_id, description, amount, items, reference, reference_key, reveal_owner,
  status, paid_amount, payer, paid_via, signature, transaction_id, scan_cursor, next_scan_at, created_at, updated_at, expires_at, paid_at)
SELECT request_id, short_code, wallet_id, NULL, description, amount, items, reference, reference_key, reveal_owner,
  status, paid_amount, payer, paid_via, signature, transaction_id, scan_cursor, next_scan_at, created_at, updated_at, expires_at, paid_at
FROM payment_requests;

DROP TABLE payment_requests;
ALTER TABLE payment_requests_v2 RENAME TO payment_requests;

CREATE INDEX payment_requests_wallet ON payment_requests(wallet_id, created_at);
CREATE INDEX payment_requests_merchant ON payment_requests(merchant_id, created_at);
CREATE INDEX payment_requests_scan ON payment_requests(status, next_scan_at);
CREATE INDEX payment_requests_expiry ON payment_requests(status, expires_at);
CREATE INDEX payment_requests_reference ON payment_requests(wallet_id, reference) WHERE reference IS NOT NULL;
CREATE INDEX payment_requests_merchant_reference ON payment_requests(merchant_id, reference) WHERE reference IS NOT NULL;

-- merchants.webhook_url copied the active webhook endpoint's URL, was read nowhere and went stale
-- when a 410 disabled the endpoint: webhook_endpoints is the one record of it.
ALTER TABLE merchants DROP COLUMN webhook_url;
