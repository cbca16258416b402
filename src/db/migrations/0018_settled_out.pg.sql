-- Schema 19 on PostgreSQL: the same as 0018_settled_out.sql, its triggers in PL/pgSQL.
ALTER TABLE wallet_spend ADD COLUMN settled_out BIGINT NOT NULL DEFAULT 0 CHECK (settled_out >= 0);

CREATE FUNCTION wallet_settled_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO wallet_spend AS s (wallet_id, total, outstanding, settled_out) VALUES (NEW.wallet_id, 0, 0, NEW.amount + NEW.fee + NEW.setup_fee)
  ON CONFLICT (wallet_id) DO UPDATE SET settled_out = s.settled_out + EXCLUDED.settled_out;
  RETURN NULL;
END $$;
CREATE TRIGGER wallet_settled_out_insert AFTER INSERT ON transactions FOR EACH ROW
WHEN (NEW.direction = 'out' AND NEW.status = 'completed')
EXECUTE FUNCTION wallet_settled_out();
CREATE TRIGGER wallet_settled_out_update AFTER UPDATE OF status ON transactions FOR EACH ROW
WHEN (NEW.direction = 'out' AND NEW.status = 'completed' AND OLD.status <> 'completed')
EXECUTE FUNCTION wallet_settled_out();
