-- Schema 19: money that left each wallet, counted as it settles (issue 42). A balance read from
-- the chain is only as good as the moment it was read: the outgoing transfers recorded complete
-- since then are already off the chain's figure or about to be, and no longer outstanding. So a
-- read notes settled_out beside it, and what the wallet may spend is that read less what is
-- outstanding less what settled since — on any node, however old the read. It only grows: a
-- completed transfer the chain later contradicts stays counted, which errs on the side of refusing.
ALTER TABLE wallet_spend ADD COLUMN settled_out INTEGER NOT NULL DEFAULT 0 CHECK (settled_out >= 0);

CREATE TRIGGER wallet_settled_out_insert AFTER INSERT ON transactions
WHEN NEW.direction = 'out' AND NEW.status = 'completed'
BEGIN
  INSERT INTO wallet_spend (wallet_id, total, outstanding, settled_out) VALUES (NEW.wallet_id, 0, 0, NEW.amount + NEW.fee + NEW.setup_fee)
  ON CONFLICT (wallet_id) DO UPDATE SET settled_out = settled_out + excluded.settled_out;
END;

CREATE TRIGGER wallet_settled_out_update AFTER UPDATE OF status ON transactions
WHEN NEW.direction = 'out' AND NEW.status = 'completed' AND OLD.status != 'completed'
BEGIN
  INSERT INTO wallet_spend (wallet_id, total, outstanding, settled_out) VALUES (NEW.wallet_id, 0, 0, NEW.amount + NEW.fee + NEW.setup_fee)
  ON CONFLICT (wallet_id) DO UPDATE SET settled_out = settled_out + excluded.settled_out;
END;
