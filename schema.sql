-- Agent Wallet Service: the full schema of a fresh database (PRAGMA user_version = 1).
-- Later changes go in src/db/migrations/NNNN_*.sql. Money columns are INTEGER micro-USDC.
-- Timestamps are INTEGER milliseconds since the Unix epoch (UTC).

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

-- Wallets and merchants share one username namespace.
CREATE TABLE usernames (
  username TEXT PRIMARY KEY,
  kind     TEXT NOT NULL CHECK (kind IN ('wallet', 'merchant')),
  ref_id   TEXT NOT NULL UNIQUE
) STRICT;

CREATE TABLE owners (
  owner_id   TEXT PRIMARY KEY,
  email      TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE wallets (
  wallet_id       TEXT PRIMARY KEY,
  username        TEXT NOT NULL UNIQUE REFERENCES usernames(username),
  name            TEXT NOT NULL,
  address         TEXT NOT NULL UNIQUE,
  api_key_hash    BLOB NOT NULL UNIQUE,
  status          TEXT NOT NULL CHECK (status IN ('unclaimed', 'claimed')),
  owner_email     TEXT,
  agent_model     TEXT,
  description     TEXT,
  metadata        TEXT,
  claim_code_hash BLOB NOT NULL,
  owner_id        TEXT REFERENCES owners(owner_id),
  server_key      BLOB NOT NULL,   -- the server's FROST key package, sealed (AES-256-GCM, aad = wallet_id)
  public_package  TEXT NOT NULL,   -- FROST public key package (JSON, public)
  created_at      INTEGER NOT NULL,
  claimed_at      INTEGER
) STRICT;

CREATE TABLE merchants (
  merchant_id    TEXT PRIMARY KEY,
  username       TEXT NOT NULL UNIQUE REFERENCES usernames(username),
  name           TEXT NOT NULL,
  payout_address TEXT NOT NULL,
  api_key_hash   BLOB NOT NULL UNIQUE,
  webhook_url    TEXT,
  created_at     INTEGER NOT NULL
) STRICT;

-- One DKG run between an agent and the server; single use, short-lived.
CREATE TABLE dkg_sessions (
  dkg_session_id TEXT PRIMARY KEY,
  state          BLOB NOT NULL,   -- the server's DKG secret state, sealed (aad = dkg_session_id)
  client_round1  TEXT NOT NULL,   -- the agent's round-1 package (public)
  status         TEXT NOT NULL CHECK (status IN ('started', 'completed', 'used')),
  result         BLOB,            -- after dkg_complete: the server key package, sealed (aad = dkg_session_id)
  public_package TEXT,
  address        TEXT,
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL
) STRICT;

-- Remembered responses of idempotent requests (DESIGN §3), scoped to principal and action.
CREATE TABLE idempotency_keys (
  principal    TEXT NOT NULL,
  action       TEXT NOT NULL,
  idem_key     TEXT NOT NULL,
  request_hash BLOB NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('running', 'done')),
  status       INTEGER,
  response     TEXT,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (principal, action, idem_key)
) STRICT;
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
