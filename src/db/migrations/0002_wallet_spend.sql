-- Schema 3: a pay intent no longer sums the wallet's history, and writes fewer index pages. An
-- index for the known-recipient check, wallet_spend / wallet_spend_windows kept by triggers
-- (filled here from the ledger), and partial event indexes (an event has a wallet or a merchant).
DROP INDEX events_wallet;
DROP INDEX events_merchant;
CREATE INDEX events_wallet ON events(wallet_id, seq) WHERE wallet_id IS NOT NULL;
CREATE INDEX events_merchant ON events(merchant_id, seq) WHERE merchant_id IS NOT NULL;

-- Whether the wallet completed a payment to an address before (approve_new_recipients), read per intent.
CREATE INDEX transactions_wallet_recipient ON transactions(wallet_id, to_address, direction, status);

-- What guard rails and the balance check read on every pay intent, kept by triggers on
-- transactions so every writer keeps them right and an intent costs the same on a wallet's
-- 10th payment and its 100,000th. An outgoing row counts for the budgets from creation until
-- rejected, cancelled, expired or failed; withdrawals count only in their category.
--   wallet_spend:         lifetime budget spend (total) and money reserved by outgoing rows not yet
--                         completed (outstanding, withdrawals included)
--   wallet_spend_windows: budget spend per 15-minute bucket of created_at (every time zone's day,
--                         week and month start on such a boundary) per category; spend = 0 for
--                         withdrawals, which count only in their category
CREATE TABLE wallet_spend (
  wallet_id   TEXT PRIMARY KEY REFERENCES wallets(wallet_id),
  total       INTEGER NOT NULL CHECK (total >= 0),
  outstanding INTEGER NOT NULL CHECK (outstanding >= 0)
) STRICT;

CREATE TABLE wallet_spend_windows (
  wallet_id TEXT NOT NULL REFERENCES wallets(wallet_id),
  bucket    INTEGER NOT NULL,                  -- created_at / 900000
  category  TEXT NOT NULL,                     -- '' for rows without one
  spend     INTEGER NOT NULL CHECK (spend IN (0, 1)),
  cost      INTEGER NOT NULL CHECK (cost >= 0),
  n         INTEGER NOT NULL CHECK (n >= 0),
  PRIMARY KEY (wallet_id, bucket, category, spend)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER wallet_spend_insert AFTER INSERT ON transactions
WHEN NEW.direction = 'out' AND NEW.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
BEGIN
  INSERT INTO wallet_spend (wallet_id, total, outstanding) VALUES (
    NEW.wallet_id,
    CASE WHEN NEW.type != 'withdrawal' THEN NEW.amount + NEW.fee + NEW.setup_fee ELSE 0 END,
    CASE WHEN NEW.status != 'completed' THEN NEW.amount + NEW.fee + NEW.setup_fee ELSE 0 END)
  ON CONFLICT (wallet_id) DO UPDATE SET total = total + excluded.total, outstanding = outstanding + excluded.outstanding;
  INSERT INTO wallet_spend_windows (wallet_id, bucket, category, spend, cost, n)
  VALUES (NEW.wallet_id, NEW.created_at / 900000, coalesce(NEW.category, ''), NEW.type != 'withdrawal', NEW.amount + NEW.fee + NEW.setup_fee, 1)
  ON CONFLICT (wallet_id, bucket, category, spend) DO UPDATE SET cost = cost + excluded.cost, n = n + excluded.n;
END;

CREATE TRIGGER wallet_spend_update AFTER UPDATE OF status, amount, fee, setup_fee, direction, type, category, created_at ON transactions
WHEN OLD.direction = 'out' OR NEW.direction = 'out'
BEGIN
  INSERT OR IGNORE INTO wallet_spend (wallet_id, total, outstanding) VALUES (NEW.wallet_id, 0, 0);
  UPDATE wallet_spend SET
    total = total
      + (CASE WHEN NEW.direction = 'out' AND NEW.type != 'withdrawal' AND NEW.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
              THEN NEW.amount + NEW.fee + NEW.setup_fee ELSE 0 END)
      - (CASE WHEN OLD.direction = 'out' AND OLD.type != 'withdrawal' AND OLD.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
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
    AND wallet_id = OLD.wallet_id AND bucket = OLD.created_at / 900000 AND category = coalesce(OLD.category, '') AND spend = (OLD.type != 'withdrawal');
  INSERT INTO wallet_spend_windows (wallet_id, bucket, category, spend, cost, n)
  SELECT NEW.wallet_id, NEW.created_at / 900000, coalesce(NEW.category, ''), NEW.type != 'withdrawal', NEW.amount + NEW.fee + NEW.setup_fee, 1
  WHERE NEW.direction = 'out' AND NEW.status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
  ON CONFLICT (wallet_id, bucket, category, spend) DO UPDATE SET cost = cost + excluded.cost, n = n + excluded.n;
END;

INSERT INTO wallet_spend (wallet_id, total, outstanding)
SELECT wallet_id,
       coalesce(sum(CASE WHEN type != 'withdrawal' THEN amount + fee + setup_fee END), 0),
       coalesce(sum(CASE WHEN status != 'completed' THEN amount + fee + setup_fee END), 0)
FROM transactions
WHERE direction = 'out' AND status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
GROUP BY wallet_id;

INSERT INTO wallet_spend_windows (wallet_id, bucket, category, spend, cost, n)
SELECT wallet_id, created_at / 900000, coalesce(category, ''), type != 'withdrawal', sum(amount + fee + setup_fee), count(*)
FROM transactions
WHERE direction = 'out' AND status IN ('pre_approved', 'awaiting_approval', 'approved', 'pending', 'completed')
GROUP BY wallet_id, created_at / 900000, coalesce(category, ''), type != 'withdrawal';
