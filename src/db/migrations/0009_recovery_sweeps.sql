-- The owner + daemon sweep (DESIGN §4.1): announced, then held for recovery.sweep_delay_seconds so
-- the owner can cancel one they did not start; after it, signed by the owner's kit and the daemon's
-- share over a message the daemon built (the whole balance to the owner's address).
CREATE TABLE recovery_sweeps (
  sweep_id        TEXT PRIMARY KEY,
  wallet_id       TEXT NOT NULL REFERENCES wallets(wallet_id),
  owner_id        TEXT NOT NULL REFERENCES owners(owner_id),
  to_address      TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('waiting', 'cancelled', 'signing')),
  executes_at     INTEGER NOT NULL,
  transaction_id  TEXT REFERENCES transactions(transaction_id),
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX recovery_sweeps_wallet ON recovery_sweeps(wallet_id, created_at);
