import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, SCHEMA_VERSION } from '../../src/db/open.ts';

// schema.sql is version 1 (what release 0.1.0 wrote); every later change is a migration.
const V1_SCHEMA = await Bun.file(new URL('../../schema.sql', import.meta.url)).text();

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'aw-migrate-'));
  dirs.push(dir);
  return join(dir, 'wallet.db');
}

/** A version-1 file with a wallet, its payments (one counting, one cancelled), one of its paylinks, a rejected payment and an invitation. */
function writeV1(path: string): void {
  const db = new Database(path, { create: true, strict: true });
  db.run('PRAGMA foreign_keys = ON');
  db.run(V1_SCHEMA);
  db.run('PRAGMA user_version = 1');
  db.run("INSERT INTO meta (key, value) VALUES ('network', 'simnet')");
  db.run("INSERT INTO usernames (username, kind, ref_id) VALUES ('old-bot', 'wallet', 'wal_old')");
  db.run(
    `INSERT INTO wallets (wallet_id, username, name, address, api_key_hash, status, claim_code_hash, claim_code_sealed, server_key, public_package, created_at)
     VALUES ('wal_old', 'old-bot', 'Old Bot', 'Addr1111111111111111111111111111111111111111', x'01', 'unclaimed', x'02', x'03', x'04', '{}', 1)`,
  );
  db.run(
    `INSERT INTO payment_requests (request_id, short_code, wallet_id, description, amount, reference, reference_key, status, paid_amount, payer, paid_via, signature,
       next_scan_at, created_at, updated_at, expires_at, paid_at)
     VALUES ('req_old', 'ABCD2345EFGH', 'wal_old', 'Old order', 5000000, 'order-1', 'RefKey111111111111111111111111111111111111111', 'paid', 5000000, 'payer-addr', 'solana_pay', 'sig1',
       10, 1, 2, 99, 2)`,
  );
  for (const [id, status, amount] of [['txn_a', 'completed', 3_000_000], ['txn_b', 'cancelled', 9_000_000], ['txn_c', 'pending', 1_000_000]] as const) {
    db.run(
      `INSERT INTO transactions (transaction_id, wallet_id, type, direction, category, status, amount, fee, to_address, created_at, updated_at)
       VALUES ('${id}', 'wal_old', 'payment', 'out', 'wallet', '${status}', ${amount}, 10000, 'Addr2222222222222222222222222222222222222222', 1, 1)`,
    );
  }
  db.run("INSERT INTO payment_request_rejections (request_id, signature, reason, amount, created_at) VALUES ('req_old', 'sig0', 'underpaid', 1, 1)");
  db.run("INSERT INTO paylink_invitations (request_id, channel, recipient, created_at) VALUES ('req_old', 'email', 'a@example.com', 1)");
  db.run("INSERT INTO deposit_cursors (wallet_id, last_signature, updated_at) VALUES ('wal_old', 'sigCursor', 3)");
  db.run(
    `INSERT INTO x402_purchases (fetch_id, transaction_id, wallet_id, url, host, method, request_sealed, x402_version, requirements, accepted, network, asset, pay_to, fee_payer,
       amount, status, created_at, updated_at)
     VALUES ('x402_old', 'txn_c', 'wal_old', 'https://api.example.com/p', 'api.example.com', 'GET', x'05', 2, '{}', '{}', 'solana:x', 'mint', 'payto', 'feepayer', 10000, 'unknown', 1, 2)`,
  );
  db.close();
}

describe('migrations', () => {
  test('a version-1 file with rows opens at the current version, keeping its paylinks, rejections and invitations', async () => {
    const path = tempDb();
    writeV1(path);
    const migrated = openDatabase(path, { network: 'simnet' });
    try {
      expect((await migrated.get<{ user_version: bigint }>('PRAGMA user_version'))?.user_version).toBe(BigInt(SCHEMA_VERSION));
      expect(SCHEMA_VERSION).toBe(20);
      // Schema 11: a sent purchase whose outcome is not on chain yet is pending.
      expect(await migrated.all('SELECT fetch_id, status, amount FROM x402_purchases')).toEqual([{ fetch_id: 'x402_old', status: 'pending', amount: 10000n }]);
      const row = (await migrated.get<Record<string, unknown>>('SELECT * FROM payment_requests'))!;
      expect(row).toMatchObject({ request_id: 'req_old', wallet_id: 'wal_old', merchant_id: null, status: 'paid', paid_amount: 5000000n, reference: 'order-1', paid_at: 2n });
      expect(await migrated.get('SELECT count(*) AS n FROM payment_request_rejections')).toEqual({ n: 1n });
      expect(await migrated.get('SELECT count(*) AS n FROM paylink_invitations')).toEqual({ n: 1n });
      expect(await migrated.all('PRAGMA foreign_key_check')).toEqual([]);
      expect(await migrated.get('PRAGMA foreign_keys')).toEqual({ foreign_keys: 1n });
      // merchants.webhook_url (a stale copy of the active endpoint's URL) is gone.
      expect((await migrated.all<{ name: string }>('PRAGMA table_info(merchants)')).map((c) => c.name)).not.toContain('webhook_url');
      // Schema 3 filled the lifetime spend from the ledger, and its triggers keep it from here on.
      const spend = async () => await migrated.get('SELECT total, outstanding FROM wallet_spend WHERE wallet_id = ?', 'wal_old');
      const buckets = async () => await migrated.all("SELECT bucket, category, spend, cost, n FROM wallet_spend_windows WHERE wallet_id = 'wal_old'");
      expect(await spend()).toEqual({ total: 4_020_000n, outstanding: 1_010_000n });
      expect(await buckets()).toEqual([{ bucket: 0n, category: 'wallet', spend: 1n, cost: 4_020_000n, n: 2n }]);
      await migrated.run("UPDATE transactions SET status = 'failed' WHERE transaction_id = 'txn_c'");
      expect(await spend()).toEqual({ total: 3_010_000n, outstanding: 0n });
      expect(await buckets()).toEqual([{ bucket: 0n, category: 'wallet', spend: 1n, cost: 3_010_000n, n: 1n }]);
      // Schema 4: a transaction remembers the priority fee of its last message (escalated on a re-sign).
      expect((await migrated.all<{ name: string }>('PRAGMA table_info(transactions)')).map((c) => c.name)).toContain('priority_fee');
      // Schema 5: the deposit watch's state replaces deposit_cursors; the cursor carries over, the amount is read afresh.
      const address = (await migrated.get<{ address: string }>("SELECT address FROM wallets WHERE wallet_id = 'wal_old'"))!.address;
      expect(await migrated.all('SELECT owner, amount, checked_at, last_signature FROM token_watch')).toEqual([{ owner: address, amount: null, checked_at: null, last_signature: 'sigCursor' }]);
      expect(await migrated.all("SELECT name FROM sqlite_master WHERE name = 'deposit_cursors'")).toEqual([]);
      // Schema 6: the in-flight holder of a recipient's setup fee, or of a paylink, is found by index, not by walking every open intent.
      const plan = async (sql: string) => (await migrated.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)).map((r) => r.detail).join('; ');
      expect(await plan("SELECT transaction_id FROM transactions WHERE to_address = 'a' AND transaction_id != 'b' AND setup_fee > 0 AND direction = 'out' AND status IN ('pre_approved', 'pending') LIMIT 1")).toContain(
        'USING INDEX transactions_setup_fee_holder (to_address=?)',
      );
      expect(await plan("SELECT transaction_id FROM transactions WHERE payment_request_id = 'r' AND direction = 'out' AND status IN ('pre_approved', 'pending') LIMIT 1")).toContain('USING INDEX transactions_paylink (payment_request_id=?)');
      // The new rule holds: a paylink names exactly one payee.
      expect(async () =>
        await migrated.run(
          "INSERT INTO payment_requests (request_id, short_code, description, reference_key, status, next_scan_at, created_at, updated_at, expires_at) VALUES ('req_x', 'X', 'x', 'k', 'open', 0, 0, 0, 0)",
        ),
      ).toThrow(/CHECK constraint failed/);
    } finally {
      migrated.close();
    }
  });

  test('a failing migration changes nothing: the file stays at version 1 with its rows', () => {
    const path = tempDb();
    writeV1(path);
    const raw = new Database(path, { strict: true });
    // A row the new table refuses (a paylink whose wallet does not exist, written with foreign keys off).
    raw.run("INSERT INTO payment_requests (request_id, short_code, wallet_id, description, reference_key, status, next_scan_at, created_at, updated_at, expires_at) VALUES ('req_orphan', 'ORPH', 'wal_gone', 'x', 'k2', 'open', 0, 0, 0, 0)");
    raw.close();
    expect(() => openDatabase(path, { network: 'simnet' })).toThrow(/cannot move to schema version 2: 1 row\(s\) break a foreign key \(first: payment_requests → wallets\); nothing was changed/);
    const after = new Database(path, { strict: true, readonly: true });
    expect(after.query('PRAGMA user_version').get()).toEqual({ user_version: 1 });
    expect(after.query('SELECT count(*) AS n FROM payment_requests').get()).toEqual({ n: 2 });
    after.close();
  });
});
