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
  claim_code_hash BLOB NOT NULL,   -- SHA-256 of the normalised claim code
  claim_code_sealed BLOB NOT NULL, -- the code itself, sealed (aad = wallet_id:claim), so errors can repeat it to the agent
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
  client_round1_hash BLOB NOT NULL UNIQUE, -- a replayed round-1 package is refused
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

-- Wallet export files (.wlt): the key K that encrypts a file, released by wallet_import_key.
CREATE TABLE wallet_exports (
  export_id         TEXT PRIMARY KEY,
  wallet_id         TEXT NOT NULL REFERENCES wallets(wallet_id),
  file_key          BLOB NOT NULL,   -- K, sealed (aad = export_id)
  import_token_hash BLOB NOT NULL,
  created_at        INTEGER NOT NULL,
  revoked_at        INTEGER
) STRICT;
CREATE INDEX wallet_exports_wallet ON wallet_exports(wallet_id);

-- Every wallet_import_key answer, for the 5-per-24-hours limit.
CREATE TABLE wallet_import_calls (
  export_id TEXT NOT NULL REFERENCES wallet_exports(export_id),
  at        INTEGER NOT NULL
) STRICT;
CREATE INDEX wallet_import_calls_export ON wallet_import_calls(export_id, at);

-- Every movement of money a wallet takes part in, with its status history in events.
CREATE TABLE transactions (
  transaction_id   TEXT PRIMARY KEY,
  wallet_id        TEXT NOT NULL REFERENCES wallets(wallet_id),
  type             TEXT NOT NULL CHECK (type IN ('payment', 'withdrawal', 'x402', 'deposit')),
  direction        TEXT NOT NULL CHECK (direction IN ('out', 'in')),
  category         TEXT CHECK (category IN ('wallet', 'merchant', 'paylink', 'x402', 'withdrawal')),
  status           TEXT NOT NULL CHECK (status IN ('pre_approved', 'awaiting_approval', 'approved', 'rejected', 'pending',
                                                   'completed', 'failed', 'expired', 'cancelled')),
  amount           INTEGER NOT NULL CHECK (amount > 0),
  fee              INTEGER NOT NULL DEFAULT 0 CHECK (fee >= 0),          -- platform fee (micro-USDC)
  setup_fee        INTEGER NOT NULL DEFAULT 0 CHECK (setup_fee >= 0),    -- recipient token-account setup fee
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
  message          BLOB,            -- the exact message the server built (what both parties sign)
  last_valid_block_height INTEGER,
  signed_tx        BLOB,            -- the signed wire bytes, stored before the first broadcast
  signature        TEXT,
  error            TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  expires_at       INTEGER,
  completed_at     INTEGER
) STRICT;
CREATE INDEX transactions_wallet ON transactions(wallet_id, created_at);
CREATE INDEX transactions_status ON transactions(status, expires_at);
CREATE UNIQUE INDEX transactions_signature ON transactions(signature, wallet_id) WHERE signature IS NOT NULL;
CREATE UNIQUE INDEX transactions_idempotency ON transactions(wallet_id, type, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Things waiting for the owner: payments over a rail, withdrawals (always), exports.
CREATE TABLE approvals (
  approval_id  TEXT PRIMARY KEY,
  wallet_id    TEXT NOT NULL REFERENCES wallets(wallet_id),
  subject_type TEXT NOT NULL CHECK (subject_type IN ('payment', 'withdrawal', 'x402')),
  subject_id   TEXT NOT NULL,
  amount       INTEGER,
  recipient    TEXT,
  reason       TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled', 'expired')),
  created_at   INTEGER NOT NULL,
  decided_at   INTEGER,
  decided_by   TEXT
) STRICT;
CREATE INDEX approvals_wallet ON approvals(wallet_id, status);

-- The event feed of a wallet or merchant (DESIGN §9), written in the transaction of the change.
CREATE TABLE events (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id    TEXT NOT NULL UNIQUE,
  wallet_id   TEXT,
  merchant_id TEXT,
  type        TEXT NOT NULL,
  data        TEXT NOT NULL,
  read        INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX events_wallet ON events(wallet_id, seq);
CREATE INDEX events_merchant ON events(merchant_id, seq);

-- The owner's guard rails per wallet; `pending` is a loosening waiting for loosen_delay_hours.
CREATE TABLE guard_rails (
  wallet_id        TEXT PRIMARY KEY REFERENCES wallets(wallet_id),
  rails            TEXT NOT NULL,   -- railsToJson of the rails in force
  pending          TEXT,
  pending_apply_at INTEGER,
  updated_at       INTEGER NOT NULL,
  updated_by       TEXT NOT NULL
) STRICT;

-- Append-only: every guard-rail decision and every change of rails or approval.
CREATE TABLE audit_log (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  wallet_id  TEXT NOT NULL,
  actor      TEXT NOT NULL,
  kind       TEXT NOT NULL,
  data       TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX audit_log_wallet ON audit_log(wallet_id, seq);
CREATE TRIGGER audit_log_append_only_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_append_only_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

-- One FROST signing round for a transaction's message (DESIGN §4). The server's nonces are sealed
-- and single use: consumed in the same SQLite transaction that computes the server's share.
CREATE TABLE sign_sessions (
  sign_session_id    TEXT PRIMARY KEY,
  transaction_id     TEXT NOT NULL REFERENCES transactions(transaction_id),
  message_hash       BLOB NOT NULL,
  agent_commitments  TEXT NOT NULL,
  server_commitments TEXT NOT NULL,
  nonces             BLOB,            -- sealed (aad = sign-nonces:<id>); NULL once consumed
  status             TEXT NOT NULL CHECK (status IN ('open', 'used', 'failed')),
  agent_share        BLOB,            -- the agent's share that completed it (public once aggregated)
  created_at         INTEGER NOT NULL,
  expires_at         INTEGER NOT NULL
) STRICT;
CREATE INDEX sign_sessions_tx ON sign_sessions(transaction_id, created_at);

-- Where the deposit watcher left off, per wallet token account.
CREATE TABLE deposit_cursors (
  wallet_id      TEXT PRIMARY KEY REFERENCES wallets(wallet_id),
  last_signature TEXT NOT NULL,
  updated_at     INTEGER NOT NULL
) STRICT;

-- ---------------------------------------------------------------------------------------------
-- Owner side (DESIGN §7): claim links, sessions, API tokens, approval links, mail outbox.
-- Every secret that travels in a URL, a cookie or a header is stored as its SHA-256 only.

-- One-time e-mailed links (15 minutes): 'claim' claims wallet_id for email and starts a session;
-- 'login' starts a session for the owner of email.
CREATE TABLE magic_links (
  link_hash  BLOB PRIMARY KEY,        -- SHA-256 of the token in the URL
  purpose    TEXT NOT NULL CHECK (purpose IN ('claim', 'login')),
  email      TEXT NOT NULL,
  wallet_id  TEXT REFERENCES wallets(wallet_id),   -- claim links only
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at    INTEGER                  -- set once: a link works a single time
) STRICT;
CREATE INDEX magic_links_expires ON magic_links(expires_at);

-- Wrong claim codes per wallet: the fifth in a row locks the claim for 15 minutes.
CREATE TABLE claim_attempts (
  wallet_id    TEXT PRIMARY KEY REFERENCES wallets(wallet_id),
  failures     INTEGER NOT NULL,      -- wrong codes since the last lock or success
  locked_until INTEGER,               -- no claim before this instant
  updated_at   INTEGER NOT NULL
) STRICT;

-- Browser sessions of owners (cookie aw_session, HttpOnly, SameSite=Lax). The CSRF token of a
-- session is derived from its secret, so it needs no column.
CREATE TABLE owner_sessions (
  session_hash BLOB PRIMARY KEY,      -- SHA-256 of the cookie value
  owner_id     TEXT NOT NULL REFERENCES owners(owner_id),
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX owner_sessions_owner ON owner_sessions(owner_id);

-- Owner API tokens (Authorization: Bearer wallet_owner_…): shown once, listed, revocable.
CREATE TABLE owner_tokens (
  token_id   TEXT PRIMARY KEY,
  owner_id   TEXT NOT NULL REFERENCES owners(owner_id),
  token_hash BLOB NOT NULL UNIQUE,    -- SHA-256 of the whole token string
  label      TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
) STRICT;
CREATE INDEX owner_tokens_owner ON owner_tokens(owner_id);

-- One-time approve/reject links of an approval e-mail (48 hours; a confirmation page comes
-- before acting). Using one spends every link of the approval.
CREATE TABLE approval_links (
  link_hash   BLOB PRIMARY KEY,       -- SHA-256 of the token in the URL
  approval_id TEXT NOT NULL REFERENCES approvals(approval_id),
  decision    TEXT NOT NULL CHECK (decision IN ('approved', 'rejected')),
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER
) STRICT;
CREATE INDEX approval_links_approval ON approval_links(approval_id);

-- Outgoing mail, written in the transaction that causes it and delivered by the mail job: over
-- SMTP when mail.smtp_url is set (retried with backoff), else printed to the log and kept here
-- for `agent-wallet admin mail`. After an SMTP delivery the body and links are wiped (they hold
-- one-time secrets the operator has no use for).
CREATE TABLE mail_outbox (
  mail_id         TEXT PRIMARY KEY,
  kind            TEXT NOT NULL,      -- claim, login, approval
  to_addr         TEXT NOT NULL,
  subject         TEXT NOT NULL,
  body            TEXT NOT NULL,      -- plain text
  links           TEXT NOT NULL,      -- JSON [{"label", "url"}]
  status          TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
  channel         TEXT CHECK (channel IN ('smtp', 'log')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  sent_at         INTEGER
) STRICT;
CREATE INDEX mail_outbox_due ON mail_outbox(status, next_attempt_at);

-- Withdrawals to external addresses: always approved by the owner; the money moves as a transaction.
CREATE TABLE withdrawals (
  withdrawal_id  TEXT PRIMARY KEY,
  transaction_id TEXT NOT NULL UNIQUE REFERENCES transactions(transaction_id),
  wallet_id      TEXT NOT NULL REFERENCES wallets(wallet_id),
  to_address     TEXT NOT NULL,
  reason         TEXT NOT NULL,
  created_at     INTEGER NOT NULL
) STRICT;
CREATE INDEX withdrawals_wallet ON withdrawals(wallet_id, created_at);

-- ---------------------------------------------------------------------------------------------
-- Merchants' payment notifications (DESIGN §8, STYLE habit 11): an outbox written in the
-- transaction of the change, delivered by the webhooks job on Standard Webhooks.

-- Verify and history look up a merchant's payments by reference; pay refuses a reused reference.
CREATE INDEX transactions_merchant_ref ON transactions(to_merchant_id, reference) WHERE to_merchant_id IS NOT NULL;

-- A merchant's webhook URL with its signing secret. At most one active endpoint per merchant;
-- set_webhook replaces it (status 'replaced'), a 410 Gone answer disables it.
CREATE TABLE webhook_endpoints (
  endpoint_id      TEXT PRIMARY KEY,        -- whe_…
  merchant_id      TEXT NOT NULL REFERENCES merchants(merchant_id),
  url              TEXT NOT NULL,
  secret           BLOB NOT NULL,           -- "whsec_…", sealed (aad = webhook-secret:<endpoint_id>)
  previous_secret  BLOB,                    -- after a rotation, also signed with until previous_until
  previous_until   INTEGER,
  status           TEXT NOT NULL CHECK (status IN ('active', 'disabled', 'replaced')),
  disabled_reason  TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX webhook_endpoints_active ON webhook_endpoints(merchant_id) WHERE status = 'active';

-- One message to one endpoint. delivery_id is the webhook-id header: the same on every attempt
-- and on a manual redelivery. payload is the exact body that is signed and sent.
CREATE TABLE webhook_deliveries (
  delivery_id     TEXT PRIMARY KEY,         -- msg_…
  endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints(endpoint_id),
  merchant_id     TEXT NOT NULL REFERENCES merchants(merchant_id),
  event_id        TEXT NOT NULL,
  event_type      TEXT NOT NULL,
  payload         TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,   -- every attempt ever made
  failures        INTEGER NOT NULL DEFAULT 0,   -- failed attempts since (re)queueing: the retry schedule position
  next_attempt_at INTEGER,
  lease_until     INTEGER,                  -- an attempt in flight owns the row until then (a crash retries after it)
  last_status     INTEGER,
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  delivered_at    INTEGER
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
CREATE INDEX webhook_deliveries_merchant ON webhook_deliveries(merchant_id, created_at);

-- Every delivery attempt, as it went.
CREATE TABLE webhook_attempts (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id  TEXT NOT NULL REFERENCES webhook_deliveries(delivery_id),
  endpoint_id  TEXT NOT NULL,
  url          TEXT NOT NULL,
  attempt      INTEGER NOT NULL,
  started_at   INTEGER NOT NULL,
  duration_ms  INTEGER NOT NULL,
  http_status  INTEGER,                     -- NULL when no answer came
  error        TEXT,
  outcome      TEXT NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed', 'disabled'))
) STRICT;
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, seq);

-- x402 purchases: one paid request to a URL that answered 402 (DESIGN §8). The money moves as the
-- x402 transaction; this row keeps what the seller asked, the option chosen, the original request
-- (sealed: it may carry the agent's credentials for the seller) and the outcome.
CREATE TABLE x402_purchases (
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
  status          TEXT NOT NULL CHECK (status IN ('open', 'signed', 'settling', 'unknown', 'completed', 'failed')),
  response        TEXT,                    -- the paid answer: {status, headers, body (base64), truncated, payment_response}
  signature       TEXT,                    -- the landed transaction, once known
  error           TEXT,
  settle_started_at INTEGER,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX x402_purchases_wallet ON x402_purchases(wallet_id, created_at);
CREATE INDEX x402_purchases_status ON x402_purchases(status, updated_at);

-- The public catalog of paid APIs: operator-curated, each entry verified by a probe and re-verified daily.
CREATE TABLE x402_catalog (
  entry_id        TEXT PRIMARY KEY,
  url             TEXT NOT NULL UNIQUE,
  method          TEXT NOT NULL,
  name            TEXT NOT NULL,
  description     TEXT NOT NULL,
  tags            TEXT NOT NULL,           -- JSON array of lower-case tags
  status          TEXT NOT NULL CHECK (status IN ('verified', 'hidden')),
  x402_version    INTEGER NOT NULL,
  network         TEXT NOT NULL,
  asset           TEXT NOT NULL,
  pay_to          TEXT NOT NULL,
  price           INTEGER NOT NULL,        -- atomic units (micro-USDC)
  verified_at     INTEGER,
  checked_at      INTEGER NOT NULL,
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX x402_catalog_status ON x402_catalog(status, name);

-- ---------------------------------------------------------------------------------------------
-- Earning and funding (DESIGN §8): paylinks with their Solana Pay reference keys, the payments
-- that reached a paylink without paying it, invitations, and agents' fund requests.

-- A payment request (paylink): open → paid | cancelled | expired. `reference_key` is the Solana
-- Pay reference (a random public key) the paying transaction carries as a read-only account; the
-- paylink job finds human payments by it. `amount` NULL = the payer chooses the amount.
CREATE TABLE payment_requests (
  request_id     TEXT PRIMARY KEY,                 -- req_…
  short_code     TEXT NOT NULL UNIQUE,             -- /pay/<short_code>
  wallet_id      TEXT NOT NULL REFERENCES wallets(wallet_id),   -- the payee
  description    TEXT NOT NULL,
  amount         INTEGER CHECK (amount IS NULL OR amount > 0),
  items          TEXT,                             -- JSON [{"description","price" (micro, string),"quantity"}]
  reference      TEXT,                             -- the payee's own reference (order id), passed as the payment reference
  reference_key  TEXT NOT NULL UNIQUE,             -- Solana Pay reference key (base58)
  reveal_owner   INTEGER NOT NULL DEFAULT 0 CHECK (reveal_owner IN (0, 1)),
  status         TEXT NOT NULL CHECK (status IN ('open', 'paid', 'cancelled', 'expired')),
  paid_amount    INTEGER,
  payer          TEXT,                             -- payer username (agent) or address (Solana Pay)
  paid_via       TEXT CHECK (paid_via IN ('wallet', 'solana_pay')),
  signature      TEXT,
  transaction_id TEXT,                             -- the payee's incoming ledger row
  scan_cursor    TEXT,                             -- newest signature of reference_key the paylink job has judged
  next_scan_at   INTEGER NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  paid_at        INTEGER
) STRICT;
CREATE INDEX payment_requests_wallet ON payment_requests(wallet_id, created_at);
CREATE INDEX payment_requests_scan ON payment_requests(status, next_scan_at);
CREATE INDEX payment_requests_expiry ON payment_requests(status, expires_at);
CREATE INDEX payment_requests_reference ON payment_requests(wallet_id, reference) WHERE reference IS NOT NULL;

-- A landed transaction carrying a paylink's reference key that did not pay it (too little, wrong
-- mint, not to the payee, too late, cancelled, already paid); shown to the payee with its reason.
CREATE TABLE payment_request_rejections (
  request_id TEXT NOT NULL REFERENCES payment_requests(request_id),
  signature  TEXT NOT NULL,
  reason     TEXT NOT NULL CHECK (reason IN ('underpaid', 'wrong_mint', 'not_to_payee', 'expired', 'cancelled', 'already_paid')),
  amount     INTEGER,                              -- base units of `mint` credited to the payee, if any
  mint       TEXT,
  payer      TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (request_id, signature)
) STRICT;

-- Invitations to pay a paylink (e-mail or another wallet's feed); also the rate-limit window.
CREATE TABLE paylink_invitations (
  request_id TEXT NOT NULL REFERENCES payment_requests(request_id),
  channel    TEXT NOT NULL CHECK (channel IN ('email', 'wallet')),
  recipient  TEXT NOT NULL,                        -- e-mail address or wallet_id
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX paylink_invitations_request ON paylink_invitations(request_id, created_at);

-- An agent asking its owner for funds: open → fulfilled (a covering deposit, or the owner) | declined.
CREATE TABLE fund_requests (
  fund_request_id TEXT PRIMARY KEY,                -- fr_…
  wallet_id       TEXT NOT NULL REFERENCES wallets(wallet_id),
  amount          INTEGER NOT NULL CHECK (amount > 0),
  reason          TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('open', 'fulfilled', 'declined')),
  resolved_by     TEXT,                            -- 'deposit' or the owner actor
  transaction_id  TEXT,                            -- the deposit that fulfilled it
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  resolved_at     INTEGER
) STRICT;
CREATE INDEX fund_requests_wallet ON fund_requests(wallet_id, status, created_at);
