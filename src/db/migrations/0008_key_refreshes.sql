-- Refreshing a wallet's key shares (DESIGN §4.1): agent and daemon add a polynomial with a zero
-- constant term, so the address stays and every share (and any recovery kit made before) moves.
-- Two phases: the daemon keeps its refreshed key here, sealed, until the agent commits the same
-- public package; only then does it replace the wallet's key.
CREATE TABLE key_refreshes (
  refresh_id     TEXT PRIMARY KEY,
  wallet_id      TEXT NOT NULL REFERENCES wallets(wallet_id),
  status         TEXT NOT NULL CHECK (status IN ('pending', 'committed', 'abandoned')),
  server_key     BLOB,              -- the refreshed server key package, sealed (aad = wallet-key:<wallet_id>); NULL once decided
  public_package TEXT NOT NULL,     -- the refreshed public package (JSON)
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  committed_at   INTEGER
) STRICT;
CREATE INDEX key_refreshes_wallet ON key_refreshes(wallet_id, created_at);
