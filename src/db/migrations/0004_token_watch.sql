-- The deposit watch (DESIGN §6.1) reads every watched USDC token account in batches and looks at
-- an account's signatures only when its amount moved. Per watched owner (a wallet's address, or a
-- merchant's payout address while it has watched paylinks): the amount last seen and the newest
-- signature handled. Replaces deposit_cursors, whose cursors carry over (the amount is unknown
-- until the first read, which therefore looks at each account's signatures once).
CREATE TABLE token_watch (
  owner          TEXT PRIMARY KEY,   -- the token account's owner address
  amount         INTEGER,            -- base units last seen; NULL: the account did not exist
  checked_at     INTEGER,            -- when the amount was last read; NULL: never
  last_signature TEXT,               -- newest signature of the token account handled
  updated_at     INTEGER NOT NULL
) STRICT;

INSERT INTO token_watch (owner, amount, checked_at, last_signature, updated_at)
  SELECT w.address, NULL, NULL, c.last_signature, c.updated_at FROM deposit_cursors c JOIN wallets w ON w.wallet_id = c.wallet_id;

DROP TABLE deposit_cursors;
