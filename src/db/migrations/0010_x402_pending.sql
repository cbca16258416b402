-- An x402 purchase whose payment was sent but whose outcome the chain has not shown yet is
-- `pending` (the word the paid web uses for it: a facilitator's settlement_pending), no longer
-- `unknown`. SQLite cannot change a CHECK in place: the table is rebuilt, rows carried over.
CREATE TABLE x402_purchases_next (
  fetch_id        TEXT PRIMARY KEY,
  transaction_id  TEXT NOT NULL UNIQUE REFERENCES transactions(transaction_id),
  wallet_id       TEXT NOT NULL REFERENCES wallets(wallet_id),
  url             TEXT NOT NULL,
  host            TEXT NOT NULL,
  method          TEXT NOT NULL,
  request_sealed  BLOB NOT NULL,           -- JSON {url, method, headers, body}, sealed (aad = x402-request:<fetch_id>)
  x402_version    INTEGER NOT NULL CHECK (x402_version IN (1, 2)),
  requirements    TEXT NOT NULL,           -- the decoded 402 challenge as the seller sent it
  accepted        TEXT NOT NULL,           -- the option chosen, exactly as offered
  network         TEXT NOT NULL,
  asset           TEXT NOT NULL,
  pay_to          TEXT NOT NULL,
  fee_payer       TEXT NOT NULL,
  amount          INTEGER NOT NULL CHECK (amount > 0),
  status          TEXT NOT NULL CHECK (status IN ('open', 'signed', 'settling', 'pending', 'completed', 'failed')),
  response        TEXT,                    -- the paid answer: {status, headers, body (base64), truncated, payment_response}
  signature       TEXT,                    -- the landed transaction, once known
  error           TEXT,
  settle_started_at INTEGER,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;
INSERT INTO x402_purchases_next
  SELECT fetch_id, transaction_id, wallet_id, url, host, method, request_sealed, x402_version, requirements, accepted, network, asset, pay_to,
         fee_payer, amount, CASE status WHEN 'unknown' THEN 'pending' ELSE status END, response, signature, error, settle_started_at, created_at, updated_at
  FROM x402_purchases;
DROP TABLE x402_purchases;
ALTER TABLE x402_purchases_next RENAME TO x402_purchases;
CREATE INDEX x402_purchases_wallet ON x402_purchases(wallet_id, created_at);
CREATE INDEX x402_purchases_status ON x402_purchases(status, updated_at);
