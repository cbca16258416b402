-- Sales settled by this daemon as an x402 facilitator for its merchants and wallets (DESIGN §8.1):
-- one row a payment, of exactly one seller; the message hash and the transaction are unique, so a
-- payload settles once.
CREATE TABLE x402_sales (
  sale_id      TEXT PRIMARY KEY,
  merchant_id  TEXT REFERENCES merchants(merchant_id),
  wallet_id    TEXT REFERENCES wallets(wallet_id),
  pay_to       TEXT NOT NULL,
  payer        TEXT NOT NULL,
  amount       INTEGER NOT NULL CHECK (amount > 0),
  network      TEXT NOT NULL,
  resource     TEXT,
  payment_id   TEXT,                       -- the buyer's payment-identifier, when it sent one
  message_hash BLOB NOT NULL UNIQUE,
  signature    TEXT NOT NULL UNIQUE,       -- the transaction id: our fee payer's signature
  signed_tx    BLOB NOT NULL,              -- the co-signed bytes, re-sent (never re-signed) while they can land
  last_valid_block_height INTEGER,
  status       TEXT NOT NULL CHECK (status IN ('settling', 'completed', 'failed')),
  error        TEXT,
  completed_at INTEGER,
  refund_due_reason TEXT,                  -- the paywall settled, then could not deliver: the merchant's to refund
  refund_due_at INTEGER,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  CHECK ((merchant_id IS NULL) != (wallet_id IS NULL))
) STRICT;
CREATE INDEX x402_sales_merchant ON x402_sales(merchant_id, created_at) WHERE merchant_id IS NOT NULL;
CREATE INDEX x402_sales_wallet ON x402_sales(wallet_id, created_at) WHERE wallet_id IS NOT NULL;
CREATE INDEX x402_sales_status ON x402_sales(status, updated_at);
