-- Signing in instead of paying again (x402 `sign-in-with-x`): the wallet proves with a CAIP-122
-- (SIWS) signature that it is the one that paid for a resource. No money moves, so no
-- transaction row: the sign-in keeps its own signing round (nonces sealed, single use).
CREATE TABLE x402_sign_ins (
  sign_in_id         TEXT PRIMARY KEY,
  wallet_id          TEXT NOT NULL REFERENCES wallets(wallet_id),
  url                TEXT NOT NULL,
  host               TEXT NOT NULL,
  method             TEXT NOT NULL,
  request_sealed     BLOB NOT NULL,        -- JSON {url, method, headers, body}, sealed (aad = x402-sign-in-request:<id>)
  fields             TEXT NOT NULL,        -- the sign-in's fields (JSON), the header's content but its signature
  message            TEXT NOT NULL,        -- the SIWS text the wallet signs
  status             TEXT NOT NULL CHECK (status IN ('open', 'signing', 'completed', 'refused', 'failed')),
  agent_commitments  TEXT,
  server_commitments TEXT,
  nonces             BLOB,                 -- the server's signing nonces, sealed (aad = sign-nonces:<id>); NULL once used
  signature          TEXT,                 -- base58, once signed
  response           TEXT,                 -- the seller's answer: {status, headers, body (base64), truncated}
  error              TEXT,
  expires_at         INTEGER NOT NULL,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL
) STRICT;
CREATE INDEX x402_sign_ins_wallet ON x402_sign_ins(wallet_id, created_at);
