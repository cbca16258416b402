-- The operator's fee on x402 sales (issue 29). The exact scheme lets the buyer's transaction carry
-- one transfer only, to the seller, so a merchant's sale fee cannot ride in it: each sale records
-- the fee it owes, and the merchant pays what it owes to the treasury against an invoice (a Solana
-- Pay request with a reference key), found on chain by that key. Counters per merchant keep the
-- credit check at settle O(1).
ALTER TABLE x402_sales ADD COLUMN fee INTEGER NOT NULL DEFAULT 0 CHECK (fee >= 0);

CREATE TABLE sale_fee_accounts (
  merchant_id TEXT PRIMARY KEY REFERENCES merchants(merchant_id),
  accrued     INTEGER NOT NULL DEFAULT 0 CHECK (accrued >= 0),   -- fees of sales not failed
  paid        INTEGER NOT NULL DEFAULT 0 CHECK (paid >= 0),      -- USDC received by the treasury against invoices
  updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE sale_fee_invoices (
  invoice_id    TEXT PRIMARY KEY,
  merchant_id   TEXT NOT NULL REFERENCES merchants(merchant_id),
  amount        INTEGER NOT NULL CHECK (amount > 0),
  reference_key TEXT NOT NULL UNIQUE,
  status        TEXT NOT NULL CHECK (status IN ('open', 'paid')),
  scan_cursor   TEXT,                      -- the newest signature of the reference key judged
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  paid_at       INTEGER
) STRICT;
CREATE UNIQUE INDEX sale_fee_invoices_open ON sale_fee_invoices(merchant_id) WHERE status = 'open';
CREATE INDEX sale_fee_invoices_merchant ON sale_fee_invoices(merchant_id, created_at);

-- Each landed transfer to the treasury carrying an invoice's reference key, once.
CREATE TABLE sale_fee_payments (
  signature   TEXT PRIMARY KEY,
  invoice_id  TEXT NOT NULL REFERENCES sale_fee_invoices(invoice_id),
  merchant_id TEXT NOT NULL REFERENCES merchants(merchant_id),
  amount      INTEGER NOT NULL CHECK (amount > 0),
  payer       TEXT,
  created_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX sale_fee_payments_invoice ON sale_fee_payments(invoice_id);
