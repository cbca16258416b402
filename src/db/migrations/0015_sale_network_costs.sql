-- What the operator's fee payer pays for each sale it co-signs (issue 40): two signatures and the
-- priority fee the buyer's transaction asks, counted against the sale's seller — a merchant or a
-- wallet — so each seller's sales may cost the fee payer at most `fees.sale_network_lamports_per_day`.
-- A row is taken back when its transaction never landed (nothing was paid).
CREATE TABLE sale_network_costs (
  sale_id    TEXT PRIMARY KEY REFERENCES x402_sales(sale_id),
  seller_id  TEXT NOT NULL,               -- the sale's merchant_id or wallet_id
  lamports   INTEGER NOT NULL CHECK (lamports >= 0),
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX sale_network_costs_seller ON sale_network_costs(seller_id, created_at);
-- All sellers' costs in a window, read from the index alone (the operator-wide allowance).
CREATE INDEX sale_network_costs_time ON sale_network_costs(created_at, lamports);

-- A merchant's sale fee is owed from the sale's completion on (it was counted at settle, before
-- the transaction was even sent): a sale still settling gives back what it counted then, and
-- counts again when it completes.
UPDATE sale_fee_accounts SET accrued = max(accrued - (
  SELECT coalesce(sum(fee), 0) FROM x402_sales s WHERE s.merchant_id = sale_fee_accounts.merchant_id AND s.status = 'settling'
), 0);
-- An invoice asking for fees no longer owed has nothing left to ask.
UPDATE sale_fee_invoices SET status = 'paid', paid_at = updated_at
WHERE status = 'open' AND (SELECT accrued <= paid FROM sale_fee_accounts a WHERE a.merchant_id = sale_fee_invoices.merchant_id);
