-- Schema 4: the compute-unit price (micro-lamports) of the transaction's current or last signed
-- message. It survives the reset after an expired, unlanded signing, so the next message can
-- offer a higher price than the one that did not land.
ALTER TABLE transactions ADD COLUMN priority_fee INTEGER;
