-- The owner's recovery share (DESIGN §4.1): one row per enrollment. The daemon keeps its report
-- for the owner (σ2 and its points, sealed) and the agent's box (sealed to the owner's key, which
-- the daemon never sees) until the owner collects them; once enrolled only the fingerprint stays.
-- A refresh supersedes the enrolled row: the kit it made no longer signs.
CREATE TABLE recovery_enrollments (
  enrollment_id  TEXT PRIMARY KEY,
  wallet_id      TEXT NOT NULL REFERENCES wallets(wallet_id),
  owner_id       TEXT NOT NULL REFERENCES owners(owner_id),
  status         TEXT NOT NULL CHECK (status IN ('open', 'split', 'delivered', 'enrolled', 'cancelled', 'expired', 'superseded')),
  daemon_report  BLOB,
  agent_box      BLOB,
  fingerprint    TEXT,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  enrolled_at    INTEGER
) STRICT;
CREATE INDEX recovery_enrollments_wallet ON recovery_enrollments(wallet_id, created_at);
