-- The owner's passkeys (issue 44, DESIGN §7.1). A credential's public key (COSE) and the evidence
-- it entered the decision log with (added under the session or under an earlier key's assertion);
-- removed keys stay, so a decision made while a key was enrolled is still checked against it.
CREATE TABLE owner_passkeys (
  credential_id TEXT PRIMARY KEY,
  owner_id      TEXT NOT NULL REFERENCES owners(owner_id),
  name          TEXT NOT NULL,
  public_key    BLOB NOT NULL,
  counter       INTEGER NOT NULL DEFAULT 0,
  transports    TEXT NOT NULL,
  evidence      TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  last_used_at  INTEGER,
  removed_at    INTEGER
);
CREATE INDEX owner_passkeys_owner ON owner_passkeys(owner_id);
-- One challenge per ceremony: the sha256 of the decision it commits to and a server nonce; used once.
CREATE TABLE passkey_challenges (
  challenge   TEXT PRIMARY KEY,
  owner_id    TEXT NOT NULL REFERENCES owners(owner_id),
  purpose     TEXT NOT NULL,
  decision    TEXT NOT NULL,
  nonce       TEXT NOT NULL,
  -- A registration waiting for an earlier key's assertion: its name, key and counter (JSON).
  pending     TEXT,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER
);
CREATE INDEX passkey_challenges_expires ON passkey_challenges(expires_at);
-- A decision the owner signed on the dashboard for the owner API to carry out once (recovery
-- enrolment, a sweep): the API token alone cannot, the passkey's assertion can.
CREATE TABLE passkey_grants (
  grant_id    TEXT PRIMARY KEY,
  owner_id    TEXT NOT NULL REFERENCES owners(owner_id),
  decision    TEXT NOT NULL,
  evidence    TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER
);
CREATE INDEX passkey_grants_owner ON passkey_grants(owner_id, decision);
-- A lost passkey: a reset started from the mail removes every key at effective_at unless a key cancels it first.
CREATE TABLE passkey_resets (
  reset_id     TEXT PRIMARY KEY,
  owner_id     TEXT NOT NULL REFERENCES owners(owner_id),
  created_at   INTEGER NOT NULL,
  effective_at INTEGER NOT NULL,
  cancelled_at INTEGER,
  done_at      INTEGER
);
CREATE INDEX passkey_resets_owner ON passkey_resets(owner_id);
-- The owner's assertion over an approval (JSON), re-checked before the daemon co-signs what it approves.
ALTER TABLE approvals ADD COLUMN evidence TEXT;
-- The owner's reason for declining a fund request (issue 43), shown wherever the request is listed.
ALTER TABLE fund_requests ADD COLUMN decline_reason TEXT;
