-- The hash-chained decision log (DESIGN §9.1): one append-only chain per wallet, each row carrying
-- the hash of the one before; written in the transaction of the change it records. Heads are
-- signed with the daemon's log key (decision_log_heads), so a rewrite shows offline.
CREATE TABLE decision_log (
  wallet_id TEXT NOT NULL,
  seq       INTEGER NOT NULL CHECK (seq >= 1),
  at        INTEGER NOT NULL,
  kind      TEXT NOT NULL,
  data      TEXT NOT NULL,          -- JSON, hashed as stored
  prev_hash BLOB NOT NULL,          -- 32 zero bytes for seq 1
  hash      BLOB NOT NULL,          -- sha256(prev_hash || JSON [wallet_id, seq, at, kind, data])
  PRIMARY KEY (wallet_id, seq)
) STRICT, WITHOUT ROWID;
CREATE TABLE decision_log_heads (
  wallet_id TEXT NOT NULL,
  seq       INTEGER NOT NULL,
  hash      BLOB NOT NULL,
  signed_at INTEGER NOT NULL,
  signature BLOB NOT NULL,          -- Ed25519 by the log key over the head statement (src/domain/decision-log.ts)
  PRIMARY KEY (wallet_id, seq)
) STRICT, WITHOUT ROWID;
