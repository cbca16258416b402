/**
 * src/db/pg/schema.sql against the SQLite ledger it mirrors (schema.sql plus every migration), in a
 * fresh PostgreSQL database: the same tables, columns, keys, indexes and triggers, and the same
 * refusals where a unique constraint guards money.
 */
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import schema from '../../schema.sql' with { type: 'text' };
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { PG_MIGRATIONS } from '../../src/db/migrations/postgres.ts';
import pgSchema from '../../src/db/pg/schema.sql' with { type: 'text' };
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile } from '../helpers/pg.ts';

/** The version schema.sql for PostgreSQL has the shape of; each later migration needs its PostgreSQL body. */
const PG_SCHEMA_VERSION = 18;
const CURRENT = 1 + MIGRATIONS.length;

const { url: server, cluster } = await pgServerForFile('the PostgreSQL schema tests');
let pg: SQL;
let lite: Database;

beforeAll(async () => {
  if (!server) return;
  pg = new SQL(await emptyPgDatabase(server), { bigint: true, max: 1 });
  // A new database's shape as openPgStore makes it: schema.sql, then each later migration's PostgreSQL body.
  await pg.unsafe(pgSchema);
  for (let v = PG_SCHEMA_VERSION + 1; v <= CURRENT; v++) if (PG_MIGRATIONS[v]) await pg.unsafe(PG_MIGRATIONS[v]!);
  lite = sqliteLedger();
});

afterAll(async () => {
  await pg?.close();
  lite?.close();
  await cluster?.stop();
});

/** A fresh SQLite ledger as a new file gets it: schema.sql, then every migration in order. */
function sqliteLedger(): Database {
  const db = new Database(':memory:', { strict: true, safeIntegers: true });
  db.run(schema);
  for (const migration of MIGRATIONS) db.run(migration);
  db.run('PRAGMA foreign_keys = ON');
  return db;
}

type Shape = Record<string, string[]>;
const TYPES: Record<string, string> = { INTEGER: 'bigint', TEXT: 'text', BLOB: 'bytea' };

/** Per table: one line per column (in order), its primary key, named indexes, unique constraints, foreign keys. */
function sqliteShape(db: Database): { columns: Shape; primaryKeys: Shape; indexes: Shape; uniques: Shape; foreignKeys: Shape; triggers: string[] } {
  const tables = db.query<{ name: string; sql: string }, []>(`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all();
  const shape = { columns: {} as Shape, primaryKeys: {} as Shape, indexes: {} as Shape, uniques: {} as Shape, foreignKeys: {} as Shape, triggers: [] as string[] };
  for (const { name, sql } of tables) {
    // The ledger reads integers as bigint (safeIntegers), the pragmas' numbers too.
    type Column = { name: string; type: string; notnull: bigint; dflt_value: string | null; pk: bigint };
    const columns = db.query<Column, []>(`PRAGMA table_info("${name}")`).all();
    const identity = /AUTOINCREMENT/.test(sql);
    shape.columns[name] = columns.map((c) =>
      column(c.name, TYPES[c.type] ?? c.type, c.notnull === 1n || c.pk > 0n, identity && c.pk > 0n ? 'identity' : c.dflt_value),
    );
    shape.primaryKeys[name] = columns.filter((c) => c.pk > 0n).sort((a, b) => Number(a.pk - b.pk)).map((c) => c.name);
    const indexCols = (index: string) => db.query<{ name: string }, []>(`PRAGMA index_info("${index}")`).all().map((c) => c.name).join(', ');
    const indexes = db.query<{ name: string; unique: bigint; origin: string; partial: bigint }, []>(`PRAGMA index_list("${name}")`).all();
    shape.indexes[name] = indexes.filter((i) => i.origin === 'c').map((i) => index(i.name, i.unique === 1n, indexCols(i.name), i.partial === 1n)).sort();
    shape.uniques[name] = indexes.filter((i) => i.origin === 'u').map((i) => indexCols(i.name)).sort();
    const refs = db.query<{ id: bigint; table: string; from: string; to: string }, []>(`PRAGMA foreign_key_list("${name}")`).all();
    const byId = Map.groupBy(refs, (r) => r.id);
    shape.foreignKeys[name] = [...byId.values()].map((r) => `(${r.map((x) => x.from).join(', ')}) -> ${r[0]!.table}(${r.map((x) => x.to).join(', ')})`).sort();
  }
  shape.triggers = db.query<{ name: string }, []>(`SELECT name FROM sqlite_master WHERE type = 'trigger'`).all().map((t) => t.name).sort();
  return shape;
}

async function pgShape(sql: SQL): Promise<ReturnType<typeof sqliteShape>> {
  const shape = { columns: {} as Shape, primaryKeys: {} as Shape, indexes: {} as Shape, uniques: {} as Shape, foreignKeys: {} as Shape, triggers: [] as string[] };
  const tables = await sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`;
  for (const { table_name } of tables) for (const key of ['columns', 'primaryKeys', 'indexes', 'uniques', 'foreignKeys'] as const) shape[key][table_name] = [];
  const columns = await sql`
    SELECT table_name, column_name, data_type, is_nullable, is_identity, column_default FROM information_schema.columns
    WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`;
  for (const c of columns) {
    shape.columns[c.table_name]!.push(column(c.column_name, c.data_type, c.is_nullable === 'NO', c.is_identity === 'YES' ? 'identity' : c.column_default));
  }
  // Column names of a constraint's or index's key, in key order.
  const keyCols = (rel: string, key: string) => `(SELECT string_agg(a.attname, ', ' ORDER BY k.i) FROM unnest(${key}) WITH ORDINALITY k(n, i)
    JOIN pg_attribute a ON a.attrelid = ${rel} AND a.attnum = k.n)`;
  const constraints = await sql.unsafe(`
    SELECT c.conrelid::regclass::text AS t, c.contype, ${keyCols('c.conrelid', 'c.conkey')} AS cols,
           c.confrelid::regclass::text AS ref, ${keyCols('c.confrelid', 'c.confkey')} AS ref_cols
    FROM pg_constraint c WHERE c.connamespace = 'public'::regnamespace AND c.contype IN ('p', 'u', 'f')`);
  for (const c of constraints) {
    if (c.contype === 'p') shape.primaryKeys[c.t] = c.cols.split(', ');
    if (c.contype === 'u') shape.uniques[c.t]!.push(c.cols);
    if (c.contype === 'f') shape.foreignKeys[c.t]!.push(`(${c.cols}) -> ${c.ref}(${c.ref_cols})`);
  }
  const indexes = await sql.unsafe(`
    SELECT i.indrelid::regclass::text AS t, x.relname AS name, i.indisunique AS uniq, i.indpred IS NOT NULL AS partial,
           ${keyCols('i.indrelid', 'i.indkey::int2[]')} AS cols
    FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
    WHERE x.relnamespace = 'public'::regnamespace AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`);
  for (const i of indexes) shape.indexes[i.t]!.push(index(i.name, i.uniq, i.cols, i.partial));
  for (const key of ['indexes', 'uniques', 'foreignKeys'] as const) for (const t of Object.keys(shape[key])) shape[key][t]!.sort();
  const triggers = await sql`SELECT tgname FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname`;
  shape.triggers = triggers.map((t: { tgname: string }) => t.tgname);
  return shape;
}

function column(name: string, type: string, notNull: boolean, dflt: string | null): string {
  return `${name} ${type}${notNull ? ' not null' : ''}${dflt === null ? '' : ` default ${dflt}`}`;
}

function index(name: string, unique: boolean, cols: string, partial: boolean): string {
  return `${name}: ${unique ? 'unique ' : ''}(${cols})${partial ? ' where …' : ''}`;
}

/** One statement written with `?` run on both databases. */
interface Side {
  name: string;
  run(statement: string, params?: unknown[]): Promise<unknown>;
  all(statement: string, params?: unknown[]): Promise<unknown[]>;
}

function sides(): Side[] {
  const numbered = (statement: string) => {
    let n = 0;
    return statement.replace(/\?/g, () => `$${++n}`);
  };
  return [
    { name: 'sqlite', run: async (s, p = []) => lite.query(s).run(...(p as never[])), all: async (s, p = []) => lite.query(s).all(...(p as never[])) },
    { name: 'postgres', run: (s, p = []) => pg.unsafe(numbered(s), p), all: async (s, p = []) => [...(await pg.unsafe(numbered(s), p))] },
  ];
}

/** Both databases refuse the statement for a unique key (SQLite's message, PostgreSQL's SQLSTATE 23505). */
async function expectDuplicateRefused(side: Side, statement: string, params: unknown[]): Promise<void> {
  const err = await side.run(statement, params).then(() => null, (e: unknown) => e);
  if (side.name === 'sqlite') expect(String(err)).toMatch(/UNIQUE constraint failed/);
  else expect((err as { errno?: string } | null)?.errno).toBe('23505');
}

const bytes = (text: string) => new TextEncoder().encode(text);

async function addWallet(side: Side, walletId: string): Promise<void> {
  await side.run('INSERT INTO usernames (username, kind, ref_id) VALUES (?, ?, ?)', [`u_${walletId}`, 'wallet', walletId]);
  await side.run(
    `INSERT INTO wallets (wallet_id, username, name, address, api_key_hash, status, claim_code_hash, claim_code_sealed, server_key, public_package, created_at)
     VALUES (?, ?, 'agent', ?, ?, 'unclaimed', ?, ?, ?, '{}', 1)`,
    [walletId, `u_${walletId}`, `addr_${walletId}`, bytes(`key_${walletId}`), bytes('code'), bytes('sealed'), bytes('server')],
  );
}

async function addMerchant(side: Side, merchantId: string): Promise<void> {
  await side.run('INSERT INTO usernames (username, kind, ref_id) VALUES (?, ?, ?)', [`u_${merchantId}`, 'merchant', merchantId]);
  await side.run(`INSERT INTO merchants (merchant_id, username, name, payout_address, api_key_hash, created_at) VALUES (?, ?, 'shop', 'payout', ?, 1)`, [
    merchantId,
    `u_${merchantId}`,
    bytes(`key_${merchantId}`),
  ]);
}

const INSERT_TX = `INSERT INTO transactions (transaction_id, wallet_id, type, direction, category, status, amount, fee, setup_fee, idempotency_key, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

describe.skipIf(!server)('PostgreSQL schema', () => {
  test(`src/db/pg/schema.sql is SQLite schema version ${PG_SCHEMA_VERSION}, and every later migration has its PostgreSQL body`, () => {
    for (let v = PG_SCHEMA_VERSION + 1; v <= CURRENT; v++) expect(PG_MIGRATIONS[v]).toBeString();
  });

  test('every SQLite table exists in PostgreSQL with the same columns in the same order, types, nullability, defaults and primary key', async () => {
    const want = sqliteShape(lite);
    const got = await pgShape(pg);
    expect(Object.keys(got.columns).sort()).toEqual(Object.keys(want.columns).sort());
    expect(got.columns).toEqual(want.columns);
    expect(got.primaryKeys).toEqual(want.primaryKeys);
  });

  test('PostgreSQL has the same named indexes (unique, partial, columns), unique constraints, foreign keys and triggers as SQLite', async () => {
    const want = sqliteShape(lite);
    const got = await pgShape(pg);
    expect(got.indexes).toEqual(want.indexes);
    expect(got.uniques).toEqual(want.uniques);
    expect(got.foreignKeys).toEqual(want.foreignKeys);
    // PostgreSQL also refuses TRUNCATE on the append-only audit log, which SQLite has no statement for.
    expect(got.triggers).toEqual([...want.triggers, 'audit_log_append_only_truncate'].sort());
  });

  test('an idempotency key makes one transaction per wallet and type in both (transactions_idempotency); rows without a key repeat', async () => {
    for (const side of sides()) {
      await addWallet(side, 'w_idem');
      const tx = (id: string, type: string, key: string | null) => [id, 'w_idem', type, 'out', null, 'pending', 1_000_000n, 0n, 0n, key, 1n, 1n];
      await side.run(INSERT_TX, tx('t_idem_1', 'payment', 'k1'));
      await expectDuplicateRefused(side, INSERT_TX, tx('t_idem_2', 'payment', 'k1'));
      await side.run(INSERT_TX, tx('t_idem_3', 'withdrawal', 'k1'));
      await side.run(INSERT_TX, tx('t_idem_4', 'payment', null));
      await side.run(INSERT_TX, tx('t_idem_5', 'payment', null));
      expect(await side.all(`SELECT transaction_id FROM transactions WHERE wallet_id = 'w_idem' ORDER BY transaction_id`)).toEqual(
        ['t_idem_1', 't_idem_3', 't_idem_4', 't_idem_5'].map((transaction_id) => ({ transaction_id })),
      );
    }
  });

  test('a settlement signature is recorded for one x402 sale only in both (x402_sales.signature UNIQUE)', async () => {
    const sale = (id: string, signature: string) => [id, 'm_sale', 'payto', 'payer', 5_000n, 'solana', bytes(`hash_${id}`), signature, bytes('tx'), 'settling', 1n, 1n];
    const insert = `INSERT INTO x402_sales (sale_id, merchant_id, pay_to, payer, amount, network, message_hash, signature, signed_tx, status, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
    for (const side of sides()) {
      await addMerchant(side, 'm_sale');
      await side.run(insert, sale('s_1', 'sig_1'));
      await expectDuplicateRefused(side, insert, sale('s_2', 'sig_1'));
      await side.run(insert, sale('s_3', 'sig_3'));
      expect(await side.all(`SELECT sale_id, amount FROM x402_sales ORDER BY sale_id`)).toEqual([
        { sale_id: 's_1', amount: 5_000n },
        { sale_id: 's_3', amount: 5_000n },
      ]);
    }
  });

  test('a merchant has at most one open sale-fee invoice in both (sale_fee_invoices_open, a partial unique index); paid ones do not count', async () => {
    const invoice = (id: string, status: string) => [id, 'm_fee', 250n, `ref_${id}`, status, 1n, 1n];
    const insert = `INSERT INTO sale_fee_invoices (invoice_id, merchant_id, amount, reference_key, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`;
    for (const side of sides()) {
      await addMerchant(side, 'm_fee');
      await side.run(insert, invoice('i_1', 'open'));
      await expectDuplicateRefused(side, insert, invoice('i_2', 'open'));
      await side.run(insert, invoice('i_3', 'paid'));
      await side.run(`UPDATE sale_fee_invoices SET status = 'paid' WHERE invoice_id = 'i_1'`);
      await side.run(insert, invoice('i_4', 'open'));
      expect(await side.all(`SELECT invoice_id, status FROM sale_fee_invoices ORDER BY invoice_id`)).toEqual([
        { invoice_id: 'i_1', status: 'paid' },
        { invoice_id: 'i_3', status: 'paid' },
        { invoice_id: 'i_4', status: 'open' },
      ]);
    }
  });

  test('the spend counters and 15-minute windows come out the same from the same transaction writes on both', async () => {
    const results: unknown[][] = [];
    for (const side of sides()) {
      await addWallet(side, 'w_spend');
      const tx = (id: string, type: string, direction: string, category: string | null, status: string, amount: bigint, createdAt: bigint) => [
        id, 'w_spend', type, direction, category, status, amount, 10n, 3n, null, createdAt, createdAt,
      ];
      await side.run(INSERT_TX, tx('t_pay', 'payment', 'out', 'wallet', 'pending', 1_000_000n, 1_000n));
      await side.run(INSERT_TX, tx('t_out', 'withdrawal', 'out', 'withdrawal', 'pending', 500n, 2_000n));
      await side.run(INSERT_TX, tx('t_in', 'deposit', 'in', null, 'completed', 7n, 3_000n));
      await side.run(INSERT_TX, tx('t_ask', 'payment', 'out', null, 'awaiting_approval', 42n, 10n));
      await side.run(INSERT_TX, tx('t_pay2', 'payment', 'out', 'wallet', 'completed', 20n, 500n));
      await side.run(`UPDATE transactions SET status = 'completed' WHERE transaction_id = 't_pay'`);
      await side.run(`UPDATE transactions SET status = 'failed' WHERE transaction_id = 't_out'`);
      await side.run(`UPDATE transactions SET created_at = ? WHERE transaction_id = 't_pay'`, [3n * 900_000n + 5n]);
      await side.run(`UPDATE transactions SET status = 'rejected' WHERE transaction_id = 't_ask'`);
      await side.run(`UPDATE transactions SET note = 'untouched columns fire nothing' WHERE transaction_id = 't_pay'`);
      results.push([
        await side.all(`SELECT wallet_id, total, outstanding FROM wallet_spend WHERE wallet_id = 'w_spend'`),
        await side.all(`SELECT bucket, category, spend, cost, n FROM wallet_spend_windows WHERE wallet_id = 'w_spend' ORDER BY bucket, category, spend`),
      ]);
    }
    expect(results[0]).toEqual([
      [{ wallet_id: 'w_spend', total: 1_000_046n, outstanding: 0n }],
      [
        { bucket: 0n, category: '', spend: 1n, cost: 0n, n: 0n },
        { bucket: 0n, category: 'wallet', spend: 1n, cost: 33n, n: 1n },
        { bucket: 0n, category: 'withdrawal', spend: 0n, cost: 0n, n: 0n },
        { bucket: 3n, category: 'wallet', spend: 1n, cost: 1_000_013n, n: 1n },
      ],
    ]);
    expect(results[1]).toEqual(results[0]!);
  });

  test('the audit log refuses updates and deletes in both', async () => {
    for (const side of sides()) {
      await side.run(`INSERT INTO audit_log (wallet_id, actor, kind, data, created_at) VALUES ('w', 'owner', 'rails', '{}', 1)`);
      for (const statement of [`UPDATE audit_log SET kind = 'forged'`, 'DELETE FROM audit_log']) {
        const err = await side.run(statement).then(() => null, (e: unknown) => e);
        expect(String(err)).toMatch(/audit_log is append-only/);
      }
    }
  });
});
