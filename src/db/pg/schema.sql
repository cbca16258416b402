-- The ledger's shape at schema version 18 (schema.sql plus src/db/migrations 0002-0017 on SQLite),
-- written once for a new PostgreSQL >= 15 database: PostgreSQL databases start at version 18, and
-- each later migration carries a body per dialect. Tables, columns (names and order), CHECKs,
-- UNIQUEs, foreign keys, defaults, index names and partial indexes are SQLite's; the types map
-- INTEGER -> BIGINT and BLOB -> BYTEA, an AUTOINCREMENT key becomes an identity BY DEFAULT (admin
-- copy-ledger inserts the keys SQLite gave), flags stay BIGINT 0/1 (the code binds integers), and
-- SQLite's triggers are PL/pgSQL. Tables come in the order their foreign keys need.

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE usernames (
  username TEXT PRIMARY KEY,
  kind     TEXT NOT NULL CHECK (kind IN ('wallet', 'merchant')),
  ref_id   TEXT NOT NULL UNIQUE
);

CREATE TABLE owners (
  owner_id   TEXT PRIMARY KEY,
  email      TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL
);

CREATE TABLE wallets (
  wallet_id       TEXT PRIMARY KEY,
  username        TEXT NOT NULL UNIQUE REFERENCES usernames(username),
  name            TEXT NOT NULL,
  address         TEXT NOT NULL UNIQUE,
  api_key_hash    BYTEA NOT NULL UNIQUE,
  status          TEXT NOT NULL CHECK (status IN ('unclaimed', 'claimed')),
  owner_email     TEXT,
  agent_model     TEXT,
  description     TEXT,
  metadata        TEXT,
  claim_code_hash BYTEA NOT NULL,   -- SHA-256 of the normalised claim code
  claim_code_sealed BYTEA NOT NULL, -- the code itself, sealed (aad = wallet_id:claim), so errors can repeat it to the agent
  owner_id        TEXT REFERENCES owners(owner_id),
  server_key      BYTEA NOT NULL,   -- the server's FROST key package, sealed (AES-256-GCM, aad = wallet_id)
  public_package  TEXT NOT NULL,   -- FROST public key package (JSON, public)
  created_at      BIGINT NOT NULL,
  claimed_at      BIGINT
);

CREATE TABLE merchants (
  merchant_id    TEXT PRIMARY KEY,
  username       TEXT NOT NULL UNIQUE REFERENCES usernames(username),
  name           TEXT NOT NULL,
  payout_address TEXT NOT NULL,
  api_key_hash   BYTEA NOT NULL UNIQUE,
  created_at     BIGINT NOT NULL
);

CREATE TABLE dkg_sessions (
  dkg_session_id TEXT PRIMARY KEY,
  state          BYTEA NOT NULL,   -- the server's DKG secret state, sealed (aad = dkg_session_id)
  client_round1  TEXT NOT NULL,   -- the agent's round-1 package (public)
  client_round1_hash BYTEA NOT NULL UNIQUE, -- a replayed round-1 package is refused
  status         TEXT NOT NULL CHECK (status IN ('started', 'completed', 'used')),
  result         BYTEA,           -- after dkg_complete: the server key package, sealed (aad = dkg_session_id)
  public_package TEXT,
  address        TEXT,
  created_at     BIGINT NOT NULL,
  expires_at     BIGINT NOT NULL
);

CREATE TABLE idempotency_keys (
  principal    TEXT NOT NULL,
  action       TEXT NOT NULL,
  idem_key     TEXT NOT NULL,
  request_hash BYTEA NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('running', 'done')),
  status       BIGINT,
  response     TEXT,
  created_at   BIGINT NOT NULL,
  PRIMARY KEY (principal, action, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

CREATE TABLE wallet_exports (
  export_id         TEXT PRIMARY KEY,
  wallet_id         TEXT NOT NULL REFERENCES wallets(wallet_id),
  file_key          BYTEA NOT NULL,   -- K, sealed (aad = export_id)
  import_token_hash BYTEA NOT NULL,
  created_at        BIGINT NOT NULL,
  revoked_at        BIGINT
);
CREATE INDEX wallet_exports_wallet ON wallet_exports(wallet_id);

CREATE TABLE wallet_import_calls (
  export_id TEXT NOT NULL REFERENCES wallet_exports(export_id),
  at        BIGINT NOT NULL
);
CREATE INDEX wallet_import_calls_export ON wallet_import_calls(export_id, at);

CREATE TABLE transactions (
  transaction_id   TEXT PRIMARY KEY,
  wallet_id        TEXT NOT NULL REFERENCES wallets(wallet_id),
  type             TEXT NOT NULL CHECK (type IN ('payment', 'withdrawal', 'x402', 'deposit')),
  direction        TEXT NOT NULL CHECK (direction IN ('out', 'in')),
  category         TEXT CHECK (category IN ('wallet', 'merchant', 'paylink', 'x402', 'withdrawal')),
  status           TEXT NOT NULL CHECK (status IN ('pre_approved', 'awaiting_approval', 'approved', 'rejected', 'pending',
                                                   'completed', 'failed', 'expired', 'cancelled')),
  amount           BIGINT NOT NULL CHECK (amount > 0),
  fee              BIGINT NOT NULL DEFAULT 0 CHECK (fee >= 0),          -- platform fee (micro-USDC)
  setup_fee        BIGINT NOT NULL DEFAULT 0 CHECK (setup_fee >= 0),    -- recipient token-account setup fee
  counterparty     TEXT,            -- username or address as the payer named it (out) / payer address (in)
  to_wallet_id     TEXT,
  to_merchant_id   TEXT,
  to_address       TEXT,            -- the recipient's owner address on chain
  note             TEXT,
  reference        TEXT,
  payment_request_id TEXT,
  decision_rule    TEXT,
  decision_reason  TEXT,
  approval_id      TEXT,
  idempotency_key  TEXT,
  message          BYTEA,           -- the exact message the server built (what both parties sign)
  last_valid_block_height BIGINT,
  signed_tx        BYTEA,           -- the signed wire bytes, stored before the first broadcast
  signature        TEXT,
  error            TEXT,
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL,
  expires_at       BIGINT,
  completed_at     BIGINT,
  priority_fee     BIGINT           -- compute-unit price (micro-lamports) of the current or last signed message
);
CREATE INDEX transactions_wallet ON transactions(wallet_id, created_at);
CREATE INDEX transactions_status ON transactions(status, expires_at);
CREATE UNIQUE INDEX transactions_signature ON transactions(signature, wallet_id) WHERE signature IS NOT NULL;
CREATE UNIQUE INDEX transactions_idempotency ON transactions(wallet_id, type, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX transactions_merchant_ref ON transactions(to_merchant_id, reference) WHERE to_merchant_id IS NOT NULL;
CREATE INDEX transactions_wallet_recipient ON transactions(wallet_id, to_address, direction, status);
CREATE INDEX transactions_setup_fee_holder ON transactions(to_address) WHERE setup_fee > 0 AND direction = 'out';
CREATE INDEX transactions_paylink ON transactions(payment_request_id) WHERE payment_request_id IS NOT NULL;

CREATE TABLE approvals (
  approval_id  TEXT PRIMARY KEY,
  wallet_id    TEXT NOT NULL REFERENCES wallets(wallet_id),
  subject_type TEXT NOT NULL CHECK (subject_type IN ('payment', 'withdrawal', 'x402')),
  subject_id   TEXT NOT NULL,
  amount       BIGINT,
  recipient    TEXT,
  reason       TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled', 'expired')),
  created_at   BIGINT NOT NULL,
  decided_at   BIGINT,
  decided_by   TEXT
);
CREATE INDEX approvals_wallet ON approvals(wallet_id, status);

CREATE TABLE events (
  seq         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  event_id    TEXT NOT NULL UNIQUE,
  wallet_id   TEXT,
  merchant_id TEXT,
  type        TEXT NOT NULL,
  data        TEXT NOT NULL,
  read        BIGINT NOT NULL DEFAULT 0,
  created_at  BIGINT NOT NULL
);
CREATE INDEX events_wallet ON events(wallet_id, seq) WHERE wallet_id IS NOT NULL;
CREATE INDEX events_merchant ON events(merchant_id, seq) WHERE merchant_id IS NOT NULL;

CREATE TABLE guard_rails (
  wallet_id        TEXT PRIMARY KEY REFERENCES wallets(wallet_id),
  rails            TEXT NOT NULL,   -- railsToJson of the rails in force
  pending          TEXT,
  pending_apply_at BIGINT,
  updated_at       BIGINT NOT NULL,
  updated_by       TEXT NOT NULL
);

CREATE TABLE audit_log (
  seq        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  wallet_id  TEXT NOT NULL,
  actor      TEXT NOT NULL,
  kind       TEXT NOT NULL,
  data       TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX audit_log_wallet ON audit_log(wallet_id, seq);
-- Append-only as on SQLite (RAISE(ABORT) there); TRUNCATE, which SQLite lacks, is refused too.
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END $$;
CREATE TRIGGER audit_log_append_only_update BEFORE UPDATE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_append_only_delete BEFORE DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_append_only_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

CREATE TABLE sign_sessions (
  sign_session_id    TEXT PRIMARY KEY,
  transaction_id     TEXT NOT NULL REFERENCES transactions(transaction_id),
  message_hash       BYTEA NOT NULL,
  agent_commitments  TEXT NOT NULL,
  server_commitments TEXT NOT NULL,
  nonces             BYTEA,           -- sealed (aad = sign-nonces:<id>); NULL once consumed
  status             TEXT NOT NULL CHECK (status IN ('open', 'used', 'failed')),
  agent_share        BYTEA,           -- the agent's share that completed it (public once aggregated)
  created_at         BIGINT NOT NULL,
  expires_at         BIGINT NOT NULL
);
CREATE INDEX sign_sessions_tx ON sign_sessions(transaction_id, created_at);

CREATE TABLE magic_links (
  link_hash  BYTEA PRIMARY KEY,        -- SHA-256 of the token in the URL
  purpose    TEXT NOT NULL CHECK (purpose IN ('claim', 'login')),
  email      TEXT NOT NULL,
  wallet_id  TEXT REFERENCES wallets(wallet_id),   -- claim links only
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at    BIGINT                   -- set once: a link works a single time
);
CREATE INDEX magic_links_expires ON magic_links(expires_at);

CREATE TABLE claim_attempts (
  wallet_id    TEXT PRIMARY KEY REFERENCES wallets(wallet_id),
  failures     BIGINT NOT NULL,      -- wrong codes since the last lock or success
  locked_until BIGINT,               -- no claim before this instant
  updated_at   BIGINT NOT NULL
);

CREATE TABLE owner_sessions (
  session_hash BYTEA PRIMARY KEY,      -- SHA-256 of the cookie value
  owner_id     TEXT NOT NULL REFERENCES owners(owner_id),
  created_at   BIGINT NOT NULL,
  expires_at   BIGINT NOT NULL
);
CREATE INDEX owner_sessions_owner ON owner_sessions(owner_id);

CREATE TABLE owner_tokens (
  token_id   TEXT PRIMARY KEY,
  owner_id   TEXT NOT NULL REFERENCES owners(owner_id),
  token_hash BYTEA NOT NULL UNIQUE,    -- SHA-256 of the whole token string
  label      TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX owner_tokens_owner ON owner_tokens(owner_id);

CREATE TABLE approval_links (
  link_hash   BYTEA PRIMARY KEY,       -- SHA-256 of the token in the URL
  approval_id TEXT NOT NULL REFERENCES approvals(approval_id),
  decision    TEXT NOT NULL CHECK (decision IN ('approved', 'rejected')),
  created_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  used_at     BIGINT
);
CREATE INDEX approval_links_approval ON approval_links(approval_id);

CREATE TABLE mail_outbox (
  mail_id         TEXT PRIMARY KEY,
  kind            TEXT NOT NULL,      -- claim, login, approval
  to_addr         TEXT NOT NULL,
  subject         TEXT NOT NULL,
  body            TEXT NOT NULL,      -- plain text
  links           TEXT NOT NULL,      -- JSON [{"label", "url"}]
  status          TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
  channel         TEXT CHECK (channel IN ('smtp', 'log')),
  attempts        BIGINT NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  last_error      TEXT,
  created_at      BIGINT NOT NULL,
  sent_at         BIGINT
);
CREATE INDEX mail_outbox_due ON mail_outbox(status, next_attempt_at);

CREATE TABLE withdrawals (
  withdrawal_id  TEXT PRIMARY KEY,
  transaction_id TEXT NOT NULL UNIQUE REFERENCES transactions(transaction_id),
  wallet_id      TEXT NOT NULL REFERENCES wallets(wallet_id),
  to_address     TEXT NOT NULL,
  reason         TEXT NOT NULL,
  created_at     BIGINT NOT NULL
);
CREATE INDEX withdrawals_wallet ON withdrawals(wallet_id, created_at);

CREATE TABLE webhook_endpoints (
  endpoint_id      TEXT PRIMARY KEY,        -- whe_…
  merchant_id      TEXT NOT NULL REFERENCES merchants(merchant_id),
  url              TEXT NOT NULL,
  secret           BYTEA NOT NULL,           -- "whsec_…", sealed (aad = webhook-secret:<endpoint_id>)
  previous_secret  BYTEA,                   -- after a rotation, also signed with until previous_until
  previous_until   BIGINT,
  status           TEXT NOT NULL CHECK (status IN ('active', 'disabled', 'replaced')),
  disabled_reason  TEXT,
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL
);
CREATE UNIQUE INDEX webhook_endpoints_active ON webhook_endpoints(merchant_id) WHERE status = 'active';

CREATE TABLE webhook_deliveries (
  delivery_id     TEXT PRIMARY KEY,         -- msg_…
  endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints(endpoint_id),
  merchant_id     TEXT NOT NULL REFERENCES merchants(merchant_id),
  event_id        TEXT NOT NULL,
  event_type      TEXT NOT NULL,
  payload         TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        BIGINT NOT NULL DEFAULT 0,   -- every attempt ever made
  failures        BIGINT NOT NULL DEFAULT 0,   -- failed attempts since (re)queueing: the retry schedule position
  next_attempt_at BIGINT,
  lease_until     BIGINT,                  -- an attempt in flight owns the row until then (a crash retries after it)
  last_status     BIGINT,
  last_error      TEXT,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL,
  delivered_at    BIGINT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
CREATE INDEX webhook_deliveries_merchant ON webhook_deliveries(merchant_id, created_at);

CREATE TABLE webhook_attempts (
  seq          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries(delivery_id),
  endpoint_id  TEXT NOT NULL,
  url          TEXT NOT NULL,
  attempt      BIGINT NOT NULL,
  started_at   BIGINT NOT NULL,
  duration_ms  BIGINT NOT NULL,
  http_status  BIGINT,                     -- NULL when no answer came
  error        TEXT,
  outcome      TEXT NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed', 'disabled'))
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, seq);

CREATE TABLE x402_catalog (
  entry_id        TEXT PRIMARY KEY,
  url             TEXT NOT NULL UNIQUE,
  method          TEXT NOT NULL,
  name            TEXT NOT NULL,
  description     TEXT NOT NULL,
  tags            TEXT NOT NULL,           -- JSON array of lower-case tags
  status          TEXT NOT NULL CHECK (status IN ('verified', 'hidden')),
  x402_version    BIGINT NOT NULL,
  network         TEXT NOT NULL,
  asset           TEXT NOT NULL,
  pay_to          TEXT NOT NULL,
  price           BIGINT NOT NULL,        -- atomic units (micro-USDC)
  verified_at     BIGINT,
  checked_at      BIGINT NOT NULL,
  last_error      TEXT,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);
CREATE INDEX x402_catalog_status ON x402_catalog(status, name);

CREATE TABLE payment_requests (
  request_id     TEXT PRIMARY KEY,
  short_code     TEXT NOT NULL UNIQUE,
  wallet_id      TEXT REFERENCES wallets(wallet_id),
  merchant_id    TEXT REFERENCES merchants(merchant_id),
  description    TEXT NOT NULL,
  amount         BIGINT CHECK (amount IS NULL OR amount > 0),
  items          TEXT,
  reference      TEXT,
  reference_key  TEXT NOT NULL UNIQUE,
  reveal_owner   BIGINT NOT NULL DEFAULT 0 CHECK (reveal_owner IN (0, 1)),
  status         TEXT NOT NULL CHECK (status IN ('open', 'paid', 'cancelled', 'expired')),
  paid_amount    BIGINT,
  payer          TEXT,
  paid_via       TEXT CHECK (paid_via IN ('wallet', 'solana_pay')),
  signature      TEXT,
  transaction_id TEXT,
  scan_cursor    TEXT,
  next_scan_at   BIGINT NOT NULL,
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL,
  expires_at     BIGINT NOT NULL,
  paid_at        BIGINT,
  CHECK ((wallet_id IS NULL) <> (merchant_id IS NULL))
);
CREATE INDEX payment_requests_wallet ON payment_requests(wallet_id, created_at);
CREATE INDEX payment_requests_merchant ON payment_requests(merchant_id, created_at);
CREATE INDEX payment_requests_scan ON payment_requests(status, next_scan_at);
CREATE INDEX payment_requests_expiry ON payment_requests(status, expires_at);
CREATE INDEX payment_requests_reference ON payment_requests(wallet_id, reference) WHERE reference IS NOT NULL;
CREATE INDEX payment_requests_merchant_reference ON payment_requests(merchant_id, reference) WHERE reference IS NOT NULL;

CREATE TABLE payment_request_rejections (
  request_id TEXT NOT NULL REFERENCES payment_requests(request_id),
  signature  TEXT NOT NULL,
  reason     TEXT NOT NULL CHECK (reason IN ('underpaid', 'wrong_mint', 'not_to_payee', 'expired', 'cancelled', 'already_paid')),
  amount     BIGINT,                              -- base units of `mint` credited to the payee, if any
  mint       TEXT,
  payer      TEXT,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (request_id, signature)
);

CREATE TABLE paylink_invitations (
  request_id TEXT NOT NULL REFERENCES payment_requests(request_id),
  channel    TEXT NOT NULL CHECK (channel IN ('email', 'wallet')),
  recipient  TEXT NOT NULL,                        -- e-mail address or wallet_id
  created_at BIGINT NOT NULL
);
CREATE INDEX paylink_invitations_request ON paylink_invitations(request_id, created_at);

CREATE TABLE fund_requests (
  fund_request_id TEXT PRIMARY KEY,                -- fr_…
  wallet_id       TEXT NOT NULL REFERENCES wallets(wallet_id),
  amount          BIGINT NOT NULL CHECK (amount > 0),
  reason          TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('open', 'fulfilled', 'declined')),
  resolved_by     TEXT,                            -- 'deposit' or the owner actor
  transaction_id  TEXT,                            -- the deposit that fulfilled it
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL,
  resolved_at     BIGINT,
  after_signature TEXT,                            -- NULL: the account had no transaction
  after_slot      BIGINT,                          -- that transaction's slot
  armed           BIGINT NOT NULL DEFAULT 1 CHECK (armed IN (0, 1))
);
CREATE INDEX fund_requests_wallet ON fund_requests(wallet_id, status, created_at);

CREATE TABLE wallet_spend (
  wallet_id   TEXT PRIMARY KEY REFERENCES wallets(wallet_id),
  total       BIGINT NOT NULL CHECK (total >= 0),
  outstanding BIGINT NOT NULL CHECK (outstanding >= 0)
);

CREATE TABLE wallet_spend_windows (
  wallet_id TEXT NOT NULL REFERENCES wallets(wallet_id),
  bucket    BIGINT NOT NULL,                  -- created_at / 900000
  category  TEXT NOT NULL,                     -- '' for rows without one
  spend     BIGINT NOT NULL CHECK (spend IN (0, 1)),
  cost      BIGINT NOT NULL CHECK (cost >= 0),
  n         BIGINT NOT NULL CHECK (n >= 0),
  PRIMARY KEY (wallet_id, bucket, category, spend)
);

-- The spend counters follow every outgoing transaction, as SQLite's triggers of the same names do:
-- total (non-withdrawal spend, live or completed), outstanding (live, not yet completed) and the
-- 15-minute windows. `spend` is 1 for a payment and 0 for a withdrawal.
CREATE FUNCTION wallet_spend_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO wallet_spend AS s (wallet_id, total, outstanding) VALUES (
    NEW.wallet_id,
    CASE WHEN NEW.type <> 'withdrawal' THEN NEW.amount + NEW.fee + NEW.setup_fee ELSE 0 END,
    CASE WHEN NEW.status <> 'completed' THEN NEW.amount + NEW.fee + NEW.setup_fee ELSE 0 END)
  ON CONFLICT (wallet_id) DO UPDATE SET total = s.total + EXCLUDED.total, outstanding = s.outstanding + EXCLUDED.outstanding;
  INSERT INTO wallet_spend_windows AS w (wallet_id, bucket, category, spend, cost, n)
  VALUES (NEW.wallet_id, NEW.created_at / 900000, coalesce(NEW.category, ''), CASE WHEN NEW.type <> 'withdrawal' THEN 1 ELSE 0 END,
          NEW.amount + NEW.fee + NEW.setup_fee, 1)
  ON CONFLICT (wallet_id, bucket, category, spend) DO UPDATE SET cost = w.cost + EXCLUDED.cost, n = w.n + EXCLUDED.n;
  RETURN NULL;
END $$;
CREATE TRIGGER wallet_spend_insert AFTER INSERT ON transactions FOR EACH ROW
WHEN (NEW.direction = 'out' AND NEW.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed'))
EXECUTE FUNCTION wallet_spend_insert();

CREATE FUNCTION wallet_spend_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO wallet_spend (wallet_id, total, outstanding) VALUES (NEW.wallet_id, 0, 0) ON CONFLICT (wallet_id) DO NOTHING;
  UPDATE wallet_spend SET
    total = total
      + (CASE WHEN NEW.direction = 'out' AND NEW.type <> 'withdrawal' AND NEW.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
              THEN NEW.amount + NEW.fee + NEW.setup_fee ELSE 0 END)
      - (CASE WHEN OLD.direction = 'out' AND OLD.type <> 'withdrawal' AND OLD.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
              THEN OLD.amount + OLD.fee + OLD.setup_fee ELSE 0 END),
    outstanding = outstanding
      + (CASE WHEN NEW.direction = 'out' AND NEW.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending')
              THEN NEW.amount + NEW.fee + NEW.setup_fee ELSE 0 END)
      - (CASE WHEN OLD.direction = 'out' AND OLD.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending')
              THEN OLD.amount + OLD.fee + OLD.setup_fee ELSE 0 END)
  WHERE wallet_id = NEW.wallet_id;
  -- Take the old row out of its bucket, then put the new one in (the same bucket unless created_at moved).
  UPDATE wallet_spend_windows SET cost = cost - (OLD.amount + OLD.fee + OLD.setup_fee), n = n - 1
  WHERE OLD.direction = 'out' AND OLD.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
    AND wallet_id = OLD.wallet_id AND bucket = OLD.created_at / 900000 AND category = coalesce(OLD.category, '')
    AND spend = CASE WHEN OLD.type <> 'withdrawal' THEN 1 ELSE 0 END;
  INSERT INTO wallet_spend_windows AS w (wallet_id, bucket, category, spend, cost, n)
  SELECT NEW.wallet_id, NEW.created_at / 900000, coalesce(NEW.category, ''), CASE WHEN NEW.type <> 'withdrawal' THEN 1 ELSE 0 END,
         NEW.amount + NEW.fee + NEW.setup_fee, 1
  WHERE NEW.direction = 'out' AND NEW.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
  ON CONFLICT (wallet_id, bucket, category, spend) DO UPDATE SET cost = w.cost + EXCLUDED.cost, n = w.n + EXCLUDED.n;
  RETURN NULL;
END $$;
CREATE TRIGGER wallet_spend_update AFTER UPDATE OF status, amount, fee, setup_fee, direction, type, category, created_at ON transactions
FOR EACH ROW WHEN (OLD.direction = 'out' OR NEW.direction = 'out')
EXECUTE FUNCTION wallet_spend_update();

CREATE TABLE token_watch (
  owner          TEXT PRIMARY KEY,   -- the token account's owner address
  amount         BIGINT,            -- base units last seen; NULL: the account did not exist
  checked_at     BIGINT,            -- when the amount was last read; NULL: never
  last_signature TEXT,               -- newest signature of the token account handled
  updated_at     BIGINT NOT NULL,
  moved_at       BIGINT
);

CREATE TABLE recovery_enrollments (
  enrollment_id  TEXT PRIMARY KEY,
  wallet_id      TEXT NOT NULL REFERENCES wallets(wallet_id),
  owner_id       TEXT NOT NULL REFERENCES owners(owner_id),
  status         TEXT NOT NULL CHECK (status IN ('open', 'split', 'delivered', 'enrolled', 'cancelled', 'expired', 'superseded')),
  daemon_report  BYTEA,
  agent_box      BYTEA,
  fingerprint    TEXT,
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL,
  expires_at     BIGINT NOT NULL,
  enrolled_at    BIGINT,
  refresh_allowed_until BIGINT     -- a refresh may supersede the enrolled kit until then
);
CREATE INDEX recovery_enrollments_wallet ON recovery_enrollments(wallet_id, created_at);

CREATE TABLE key_refreshes (
  refresh_id     TEXT PRIMARY KEY,
  wallet_id      TEXT NOT NULL REFERENCES wallets(wallet_id),
  status         TEXT NOT NULL CHECK (status IN ('pending', 'committed', 'abandoned')),
  server_key     BYTEA,             -- the refreshed server key package, sealed (aad = wallet-key:<wallet_id>); NULL once decided
  public_package TEXT NOT NULL,     -- the refreshed public package (JSON)
  created_at     BIGINT NOT NULL,
  expires_at     BIGINT NOT NULL,
  committed_at   BIGINT,
  api_key_hash   BYTEA              -- the bot API key's hash after the commit (NULL for older refreshes)
);
CREATE INDEX key_refreshes_wallet ON key_refreshes(wallet_id, created_at);

CREATE TABLE recovery_sweeps (
  sweep_id        TEXT PRIMARY KEY,
  wallet_id       TEXT NOT NULL REFERENCES wallets(wallet_id),
  owner_id        TEXT NOT NULL REFERENCES owners(owner_id),
  to_address      TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('waiting', 'cancelled', 'signing')),
  executes_at     BIGINT NOT NULL,
  transaction_id  TEXT REFERENCES transactions(transaction_id),
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);
CREATE INDEX recovery_sweeps_wallet ON recovery_sweeps(wallet_id, created_at);

CREATE TABLE x402_purchases (
  fetch_id        TEXT PRIMARY KEY,
  transaction_id  TEXT NOT NULL UNIQUE REFERENCES transactions(transaction_id),
  wallet_id       TEXT NOT NULL REFERENCES wallets(wallet_id),
  url             TEXT NOT NULL,
  host            TEXT NOT NULL,
  method          TEXT NOT NULL,
  request_sealed  BYTEA NOT NULL,           -- JSON {url, method, headers, body}, sealed (aad = x402-request:<fetch_id>)
  x402_version    BIGINT NOT NULL CHECK (x402_version IN (1, 2)),
  requirements    TEXT NOT NULL,           -- the decoded 402 challenge as the seller sent it
  accepted        TEXT NOT NULL,           -- the option chosen, exactly as offered
  network         TEXT NOT NULL,
  asset           TEXT NOT NULL,
  pay_to          TEXT NOT NULL,
  fee_payer       TEXT NOT NULL,
  amount          BIGINT NOT NULL CHECK (amount > 0),
  status          TEXT NOT NULL CHECK (status IN ('open', 'signed', 'settling', 'pending', 'completed', 'failed')),
  response        TEXT,                    -- the paid answer: {status, headers, body (base64), truncated, payment_response}
  signature       TEXT,                    -- the landed transaction, once known
  error           TEXT,
  settle_started_at BIGINT,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);
CREATE INDEX x402_purchases_wallet ON x402_purchases(wallet_id, created_at);
CREATE INDEX x402_purchases_status ON x402_purchases(status, updated_at);

CREATE TABLE x402_sign_ins (
  sign_in_id         TEXT PRIMARY KEY,
  wallet_id          TEXT NOT NULL REFERENCES wallets(wallet_id),
  url                TEXT NOT NULL,
  host               TEXT NOT NULL,
  method             TEXT NOT NULL,
  request_sealed     BYTEA NOT NULL,        -- JSON {url, method, headers, body}, sealed (aad = x402-sign-in-request:<id>)
  fields             TEXT NOT NULL,        -- the sign-in's fields (JSON), the header's content but its signature
  message            TEXT NOT NULL,        -- the SIWS text the wallet signs
  status             TEXT NOT NULL CHECK (status IN ('open', 'signing', 'completed', 'refused', 'failed')),
  agent_commitments  TEXT,
  server_commitments TEXT,
  nonces             BYTEA,                -- the server's signing nonces, sealed (aad = sign-nonces:<id>); NULL once used
  signature          TEXT,                 -- base58, once signed
  response           TEXT,                 -- the seller's answer: {status, headers, body (base64), truncated}
  error              TEXT,
  expires_at         BIGINT NOT NULL,
  created_at         BIGINT NOT NULL,
  updated_at         BIGINT NOT NULL
);
CREATE INDEX x402_sign_ins_wallet ON x402_sign_ins(wallet_id, created_at);

CREATE TABLE x402_sales (
  sale_id      TEXT PRIMARY KEY,
  merchant_id  TEXT REFERENCES merchants(merchant_id),
  wallet_id    TEXT REFERENCES wallets(wallet_id),
  pay_to       TEXT NOT NULL,
  payer        TEXT NOT NULL,
  amount       BIGINT NOT NULL CHECK (amount > 0),
  network      TEXT NOT NULL,
  resource     TEXT,
  payment_id   TEXT,                       -- the buyer's payment-identifier, when it sent one
  message_hash BYTEA NOT NULL UNIQUE,
  signature    TEXT NOT NULL UNIQUE,       -- the transaction id: our fee payer's signature
  signed_tx    BYTEA NOT NULL,              -- the co-signed bytes, re-sent (never re-signed) while they can land
  last_valid_block_height BIGINT,
  status       TEXT NOT NULL CHECK (status IN ('settling', 'completed', 'failed')),
  error        TEXT,
  completed_at BIGINT,
  refund_due_reason TEXT,                  -- the paywall settled, then could not deliver: the merchant's to refund
  refund_due_at BIGINT,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL,
  fee          BIGINT NOT NULL DEFAULT 0 CHECK (fee >= 0),
  CHECK ((merchant_id IS NULL) != (wallet_id IS NULL))
);
CREATE INDEX x402_sales_merchant ON x402_sales(merchant_id, created_at) WHERE merchant_id IS NOT NULL;
CREATE INDEX x402_sales_wallet ON x402_sales(wallet_id, created_at) WHERE wallet_id IS NOT NULL;
CREATE INDEX x402_sales_status ON x402_sales(status, updated_at);

CREATE TABLE decision_log (
  wallet_id TEXT NOT NULL,
  seq       BIGINT NOT NULL CHECK (seq >= 1),
  at        BIGINT NOT NULL,
  kind      TEXT NOT NULL,
  data      TEXT NOT NULL,          -- JSON, hashed as stored
  prev_hash BYTEA NOT NULL,          -- 32 zero bytes for seq 1
  hash      BYTEA NOT NULL,          -- sha256(prev_hash || JSON [wallet_id, seq, at, kind, data])
  PRIMARY KEY (wallet_id, seq)
);

CREATE TABLE decision_log_heads (
  wallet_id TEXT NOT NULL,
  seq       BIGINT NOT NULL,
  hash      BYTEA NOT NULL,
  signed_at BIGINT NOT NULL,
  signature BYTEA NOT NULL,          -- Ed25519 by the log key over the head statement (src/domain/decision-log.ts)
  PRIMARY KEY (wallet_id, seq)
);

CREATE TABLE sale_fee_accounts (
  merchant_id TEXT PRIMARY KEY REFERENCES merchants(merchant_id),
  accrued     BIGINT NOT NULL DEFAULT 0 CHECK (accrued >= 0),   -- fees of sales not failed
  paid        BIGINT NOT NULL DEFAULT 0 CHECK (paid >= 0),      -- USDC received by the treasury against invoices
  updated_at  BIGINT NOT NULL
);

CREATE TABLE sale_fee_invoices (
  invoice_id    TEXT PRIMARY KEY,
  merchant_id   TEXT NOT NULL REFERENCES merchants(merchant_id),
  amount        BIGINT NOT NULL CHECK (amount > 0),
  reference_key TEXT NOT NULL UNIQUE,
  status        TEXT NOT NULL CHECK (status IN ('open', 'paid')),
  scan_cursor   TEXT,                      -- the newest signature of the reference key judged
  created_at    BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL,
  paid_at       BIGINT
);
CREATE UNIQUE INDEX sale_fee_invoices_open ON sale_fee_invoices(merchant_id) WHERE status = 'open';
CREATE INDEX sale_fee_invoices_merchant ON sale_fee_invoices(merchant_id, created_at);

CREATE TABLE sale_fee_payments (
  signature   TEXT PRIMARY KEY,
  invoice_id  TEXT NOT NULL REFERENCES sale_fee_invoices(invoice_id),
  merchant_id TEXT NOT NULL REFERENCES merchants(merchant_id),
  amount      BIGINT NOT NULL CHECK (amount > 0),
  payer       TEXT,
  created_at  BIGINT NOT NULL
);
CREATE INDEX sale_fee_payments_invoice ON sale_fee_payments(invoice_id);

CREATE TABLE sale_network_costs (
  sale_id    TEXT PRIMARY KEY REFERENCES x402_sales(sale_id),
  seller_id  TEXT NOT NULL,               -- the sale's merchant_id or wallet_id
  lamports   BIGINT NOT NULL CHECK (lamports >= 0),
  created_at BIGINT NOT NULL
);
CREATE INDEX sale_network_costs_seller ON sale_network_costs(seller_id, created_at);
CREATE INDEX sale_network_costs_time ON sale_network_costs(created_at, lamports);
