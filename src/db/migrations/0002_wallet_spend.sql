-- Schema 3: guard-rail usage without summing a wallet's whole history per pay intent. Indexes for
-- the outstanding and known-recipient checks, and wallet_spend (lifetime spend kept by triggers),
-- filled here from the ledger as it stands.
-- Indexes the per-intent checks read: a wallet's outstanding payments (reservations) and whether
-- it completed a payment to an address before (approve_new_recipients).
CREATE INDEX transactions_wallet_open ON transactions(wallet_id, direction, status);
CREATE INDEX transactions_wallet_recipient ON transactions(wallet_id, to_address, direction, status);

-- A wallet's lifetime spend as the guard rails' total budget counts it (outgoing, not withdrawals,
-- from creation until rejected, cancelled, expired or failed). Kept by triggers, so every writer
-- of transactions keeps it right and a pay intent reads it in O(1) instead of summing history.
CREATE TABLE wallet_spend (
  wallet_id TEXT PRIMARY KEY REFERENCES wallets(wallet_id),
  total     INTEGER NOT NULL CHECK (total >= 0)
) STRICT;

CREATE TRIGGER wallet_spend_insert AFTER INSERT ON transactions
WHEN NEW.direction = 'out' AND NEW.type != 'withdrawal' AND NEW.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
BEGIN
  INSERT INTO wallet_spend (wallet_id, total) VALUES (NEW.wallet_id, NEW.amount + NEW.fee + NEW.setup_fee)
  ON CONFLICT (wallet_id) DO UPDATE SET total = total + excluded.total;
END;

CREATE TRIGGER wallet_spend_update AFTER UPDATE OF status, amount, fee, setup_fee, direction, type ON transactions
BEGIN
  INSERT OR IGNORE INTO wallet_spend (wallet_id, total) VALUES (NEW.wallet_id, 0);
  UPDATE wallet_spend SET total = total
    + (CASE WHEN NEW.direction = 'out' AND NEW.type != 'withdrawal' AND NEW.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
            THEN NEW.amount + NEW.fee + NEW.setup_fee ELSE 0 END)
    - (CASE WHEN OLD.direction = 'out' AND OLD.type != 'withdrawal' AND OLD.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
            THEN OLD.amount + OLD.fee + OLD.setup_fee ELSE 0 END)
  WHERE wallet_id = NEW.wallet_id;
END;

INSERT INTO wallet_spend (wallet_id, total)
SELECT wallet_id, sum(amount + fee + setup_fee) FROM transactions
WHERE direction = 'out' AND type != 'withdrawal' AND status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
GROUP BY wallet_id;
