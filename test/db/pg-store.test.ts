/**
 * PgStore on a PostgreSQL server (the run's, or a throwaway cluster of the file's own; a fresh
 * database per test): parameters, exact money and blobs, what Bun returns per type, transactions followed by async context,
 * savepoints, hooks, commit counts, SERIALIZABLE's retry against a lost update, and openPgStore's
 * schema creation and refusals.
 */
import { SQL } from 'bun';
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { DatabaseOpenError, SCHEMA_VERSION } from '../../src/db/open.ts';
import { oldestServing } from '../../src/db/migrations/postgres.ts';
import { MAX_TX_ATTEMPTS, NumericResultError, openPgStore, PgStore, type PgStoreOptions, TransactionConflictError } from '../../src/db/pg-store.ts';
import type { TxScope } from '../../src/db/store.ts';
import { pgServerForFile } from '../helpers/pg.ts';

const { url: server, cluster } = await pgServerForFile('the PgStore tests');

/** Creates and drops this file's databases; works in none. */
const admin = server ? new SQL(server, { bigint: true, max: 1 }) : null;
let dbUrl = '';
let dbName = '';
const opened: { close(): Promise<void> }[] = [];

beforeEach(async () => {
  if (!server) return;
  const name = `t_${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('hex')}`;
  await admin!.unsafe(`CREATE DATABASE ${name}`);
  dbName = name;
  const url = new URL(server);
  url.pathname = `/${name}`;
  dbUrl = url.toString();
});

afterEach(async () => {
  for (const c of opened.splice(0)) await c.close();
  // Dropped at once: the server's shutdown checkpoint then has little to write.
  if (dbName) await admin!.unsafe(`DROP DATABASE ${dbName} WITH (FORCE)`);
});

afterAll(async () => {
  await admin?.close();
  await cluster?.stop();
});

function store(opts: PgStoreOptions = {}): PgStore {
  const s = new PgStore(dbUrl, { poolSize: 4, ...opts });
  opened.push(s);
  return s;
}

/** A second client on the same database: sees only what is committed. */
function observer(): SQL {
  const sql = new SQL(dbUrl, { bigint: true, max: 1 });
  opened.push(sql);
  return sql;
}

async function ledgerTable(s: PgStore): Promise<void> {
  await s.exec('CREATE TABLE t (id BIGINT PRIMARY KEY, note TEXT, amount BIGINT, blob BYTEA)');
}

async function until(what: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await Bun.sleep(1);
  }
}

const pg = server ? describe : describe.skip;

pg('statements', () => {
  test('binds ? and ?N positionally and $name by name, a name used twice bound twice, never inside quotes', async () => {
    const s = store();
    await ledgerTable(s);
    await s.run('INSERT INTO t (id, note) VALUES (?, ?)', 1, 'one');
    await s.run('INSERT INTO t (id, note) VALUES (?2, ?1)', 'two', 2);
    const r = await s.run('INSERT INTO t (id, note, amount) VALUES ($id, $note, $id)', { note: 'three $note ?', id: 3 });
    expect(r.changes).toBe(1);
    expect(await s.get('SELECT note, amount FROM t WHERE id = $id AND note <> \'$id\'', { id: 3 })).toEqual({ note: 'three $note ?', amount: 3n });
    expect(await s.all<{ id: bigint }>('SELECT id FROM t ORDER BY id')).toEqual([{ id: 1n }, { id: 2n }, { id: 3n }]);
    expect((await s.get<{ note: string }>('SELECT note FROM t WHERE id = ?', 2))?.note).toBe('two');
    expect(await s.get('SELECT note FROM t WHERE id = ?', 99)).toBeNull();
    expect((await s.run('UPDATE t SET note = ? WHERE id <> ?', 'x', 3)).changes).toBe(2);
    await expect(s.get('SELECT note FROM t WHERE id = $missing', { id: 1 })).rejects.toThrow('no value for $missing');
  });

  test('money beyond 2^53 and bytes come back exact: int8 as bigint, bytea as a Uint8Array', async () => {
    const s = store();
    await ledgerTable(s);
    const money = 2n ** 53n + 1n;
    const bytes = new Uint8Array([0, 1, 254, 255, 0]);
    await s.run('INSERT INTO t (id, amount, blob) VALUES (?, ?, ?)', 1, money, bytes);
    await s.run('INSERT INTO t (id, amount, blob) VALUES ($id, $amount, $blob)', { id: 2, amount: -money, blob: new Uint8Array(0) });
    const rows = await s.all<{ amount: bigint; blob: Uint8Array }>('SELECT amount, blob FROM t ORDER BY id');
    expect(rows[0]!.amount).toBe(money);
    expect(rows[1]!.amount).toBe(-money);
    expect(rows[0]!.blob).toBeInstanceOf(Uint8Array);
    expect([...rows[0]!.blob]).toEqual([...bytes]);
    expect(rows[1]!.blob.length).toBe(0);
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
    expect(await s.get('SELECT id FROM t WHERE amount = ?', money)).toEqual({ id: 1n });
  });

  test('aggregates and literals: every integer a bigint as on SQLite, booleans 1n/0n, a NUMERIC refused, never a string', async () => {
    const s = store();
    await ledgerTable(s);
    await s.run('INSERT INTO t (id, amount) VALUES (1, ?), (2, ?)', 2n ** 53n, 1n);
    // count(*) is int8 and MAX(int8) int8: Bun returns bigint. SUM(int8) is NUMERIC, which Bun returns
    // as a string; toPostgres casts SUM to BIGINT. A literal 1 is int4, which Bun returns as a number
    // and a comparison is bool, which Bun returns as a boolean: the store makes them 1n and 1n, as SQLite would.
    const row = await s.get('SELECT count(*) AS n, SUM(amount) AS total, MAX(amount) AS top, 1 AS one, amount > 1 AS big FROM t WHERE id = 1 GROUP BY amount');
    expect(row).toEqual({ n: 1n, total: 2n ** 53n, top: 2n ** 53n, one: 1n, big: 1n });
    const sum = await s.get<{ total: bigint }>('SELECT SUM(amount) AS total FROM t');
    expect(sum?.total).toBe(2n ** 53n + 1n);
    // A NUMERIC the SQL does not cast (AVG, a decimal literal) throws rather than arrive as a string.
    await expect(s.get('SELECT AVG(amount) AS mean FROM t')).rejects.toThrow(NumericResultError);
    await expect(s.all('SELECT 0.5 AS half')).rejects.toThrow('column "half" is NUMERIC');
    expect(await s.get('SELECT CAST(0.5 AS REAL) AS half')).toEqual({ half: 0.5 });
  });
});

pg('transactions', () => {
  test('a throw rolls the transaction back and reaches the caller', async () => {
    const s = store();
    await ledgerTable(s);
    await expect(
      s.transaction(async () => {
        await s.run('INSERT INTO t (id) VALUES (1)');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await s.all('SELECT id FROM t')).toEqual([]);
    expect(s.commits.all).toBe(0);
  });

  test('statements in the body and in the functions it calls run in the transaction: another connection sees nothing until the commit', async () => {
    const s = store();
    await ledgerTable(s);
    const watcher = observer();
    const insert = async (id: number) => {
      await Bun.sleep(0);
      return s.run('INSERT INTO t (id) VALUES (?)', id);
    };
    const seenInside = await s.transaction(async () => {
      expect(s.inTransaction).toBe(true);
      await s.run('INSERT INTO t (id) VALUES (1)');
      await Promise.all([insert(2), insert(3)]);
      expect((await watcher.unsafe('SELECT count(*) AS n FROM t'))[0].n).toBe(0n);
      return (await s.get<{ n: bigint }>('SELECT count(*) AS n FROM t'))!.n;
    });
    expect(seenInside).toBe(3n);
    expect(s.inTransaction).toBe(false);
    expect((await watcher.unsafe('SELECT count(*) AS n FROM t'))[0].n).toBe(3n);
  });

  test('a nested transaction is a savepoint: its throw rolls back only what it wrote', async () => {
    const s = store();
    await ledgerTable(s);
    await s.transaction(async () => {
      await s.run('INSERT INTO t (id) VALUES (1)');
      await expect(
        s.transaction(async () => {
          await s.run('INSERT INTO t (id) VALUES (2)');
          await s.run('INSERT INTO t (id) VALUES (1)'); // a unique violation aborts the savepoint, not the transaction
        }),
      ).rejects.toThrow();
      const kept = await s.transaction(async () => {
        await s.run('INSERT INTO t (id) VALUES (3)');
        return s.all('SELECT id FROM t ORDER BY id');
      });
      expect(kept).toEqual([{ id: 1n }, { id: 3n }]);
      await s.run('INSERT INTO t (id) VALUES (4)');
    });
    expect(await s.all('SELECT id FROM t ORDER BY id')).toEqual([{ id: 1n }, { id: 3n }, { id: 4n }]);
    expect(s.commits.all).toBe(1);
  });

  test('a statement left behind after the transaction ended runs outside it, on the pool', async () => {
    const s = store();
    await ledgerTable(s);
    const watcher = observer();
    let release!: () => void;
    const later = new Promise<void>((resolve) => (release = resolve));
    let leftBehind!: Promise<boolean>;
    await s.transaction(async () => {
      await s.run('INSERT INTO t (id) VALUES (1)');
      leftBehind = later.then(async () => {
        await s.run('INSERT INTO t (id) VALUES (2)');
        return s.inTransaction;
      });
    });
    release();
    expect(await leftBehind).toBe(false);
    // Committed on its own: visible to another connection at once.
    expect(await watcher.unsafe('SELECT id FROM t ORDER BY id')).toEqual([{ id: 1n }, { id: 2n }]);
  });

  test('hooks wrap each outermost body once and each savepoint with nested=true; scope is shared within one transaction', async () => {
    const s = store();
    await ledgerTable(s);
    const calls: { nested: boolean; scope: TxScope }[] = [];
    s.addTxHook(async (body, scope, nested) => {
      calls.push({ nested, scope });
      expect(s.inTransaction).toBe(true);
      return body();
    });
    const inner = await s.transaction(() => s.transaction(async () => s.scope()));
    expect(calls.map((c) => c.nested)).toEqual([false, true]);
    expect(calls[0]!.scope).toBe(calls[1]!.scope);
    expect(inner).toBe(calls[0]!.scope);
    expect(s.scope()).toBeNull();
  });

  test('commits are counted once per outermost transaction, per origin too', async () => {
    const s = store();
    await ledgerTable(s);
    await s.transaction(async () => void (await s.transaction(async () => {})), { origin: 'pay' });
    await s.transaction(async () => {}, { origin: 'pay' });
    await s.transaction(async () => {});
    await s.transaction(async () => Promise.reject(new Error('no')), { origin: 'pay' }).catch(() => {});
    expect(s.commits.all).toBe(3);
    expect(s.commits.byOrigin.get('pay')).toBe(2);
    expect(s.stats.transactions).toBe(4);
  });
});

pg('keyed transactions', () => {
  /** Two transactions that each wait, inside, until the other has begun; true when they overlapped. */
  async function overlap(s: PgStore, a: string[] | undefined, b: string[] | undefined): Promise<boolean> {
    const inside = new Set<string>();
    const body = (me: string, other: string) => async () => {
      inside.add(me);
      // Polled with a deadline: the other begins at once unless a lock holds it back.
      const deadline = Date.now() + 800;
      while (!inside.has(other) && Date.now() < deadline) await Bun.sleep(10);
      return inside.has(other);
    };
    const [x, y] = await Promise.all([s.transaction(body('a', 'b'), { locks: a }), s.transaction(body('b', 'a'), { locks: b })]);
    return x && y;
  }

  test('transactions about other keys run side by side; about a shared key, or one without keys, one after the other', async () => {
    const s = store();
    expect(await overlap(s, ['wallet:a'], ['wallet:b'])).toBe(true);
    expect(await overlap(s, ['wallet:a', 'address:x'], ['wallet:b', 'address:x'])).toBe(false);
    expect(await overlap(s, ['wallet:a'], undefined)).toBe(false);
    expect(await overlap(s, undefined, undefined)).toBe(false);
  });

  test('two keyed transactions naming the same keys in another order wait for each other without a deadlock', async () => {
    const s = store();
    await s.exec('CREATE TABLE n (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)');
    await s.run('INSERT INTO n (id, v) VALUES (1, 0)');
    const bump = (keys: string[]) => s.transaction(async () => {
      const { v } = (await s.get<{ v: bigint }>('SELECT v FROM n WHERE id = 1'))!;
      await Bun.sleep(20);
      await s.run('UPDATE n SET v = ? WHERE id = 1', v + 1n);
    }, { locks: keys });
    await Promise.all([bump(['wallet:a', 'wallet:b']), bump(['wallet:b', 'wallet:a']), bump(['wallet:b', 'wallet:a'])]);
    expect((await s.get<{ v: bigint }>('SELECT v FROM n WHERE id = 1'))!.v).toBe(3n);
    expect(s.stats.retries).toBe(0);
  });
});

pg('isolation', () => {
  /** Two transactions each read the balance, wait until both have read it, then write balance + 1. */
  async function raceTwoIncrements(s: PgStore): Promise<bigint> {
    await s.exec('CREATE TABLE acct (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)');
    await s.run('INSERT INTO acct (id, balance) VALUES (1, 100)');
    let reads = 0;
    const increment = () =>
      s.transaction(async () => {
        const { balance } = (await s.get<{ balance: bigint }>('SELECT balance FROM acct WHERE id = 1'))!;
        reads++;
        // Both have read before either writes; an attempt run again after a failure finds reads ≥ 2 at once.
        await until(() => reads >= 2);
        await s.run('UPDATE acct SET balance = ? WHERE id = 1', balance + 1n);
      });
    await Promise.all([increment(), increment()]);
    return (await s.get<{ balance: bigint }>('SELECT balance FROM acct WHERE id = 1'))!.balance;
  }

  test('SERIALIZABLE without the writer lock: two concurrent read-modify-writes of one row both land (+2), the loser run again', async () => {
    const s = store({ isolation: 'serializable', writerLock: false });
    expect(await raceTwoIncrements(s)).toBe(102n);
    expect(s.stats.retries).toBeGreaterThanOrEqual(1);
    expect(s.stats.serializationFailures).toBe(s.stats.retries);
    expect(s.commits.all).toBe(2);
  });

  test('with the writer lock (the default) the second waits for the first: +2, nothing run again', async () => {
    const s = store();
    let reads = 0;
    const increment = () =>
      s.transaction(async () => {
        const { balance } = (await s.get<{ balance: bigint }>('SELECT balance FROM acct WHERE id = 1'))!;
        reads++;
        await s.run('UPDATE acct SET balance = ? WHERE id = 1', balance + 1n);
      });
    await s.exec('CREATE TABLE acct (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)');
    await s.run('INSERT INTO acct (id, balance) VALUES (1, 100)');
    await Promise.all([increment(), increment()]);
    expect((await s.get<{ balance: bigint }>('SELECT balance FROM acct WHERE id = 1'))!.balance).toBe(102n);
    expect(reads).toBe(2);
    expect(s.stats.retries).toBe(0);
  });

  test('READ COMMITTED without the writer lock: the same race loses an update (+1): the lock is what protects it', async () => {
    const s = store({ writerLock: false });
    expect(await raceTwoIncrements(s)).toBe(101n);
    expect(s.stats.retries).toBe(0);
  });
});

pg('retries', () => {
  /** Raises serialization_failure as PostgreSQL would on a conflict. */
  const conflict = "DO $$ BEGIN RAISE EXCEPTION 'simulated conflict' USING ERRCODE = 'serialization_failure'; END $$";

  test(`gives up after ${MAX_TX_ATTEMPTS} attempts with TransactionConflictError, having run the body each time`, async () => {
    const s = store();
    let attempts = 0;
    const failing = s.transaction(async () => {
      attempts++;
      await s.exec(conflict);
    });
    await expect(failing).rejects.toThrow(TransactionConflictError);
    await expect(failing).rejects.toThrow(`gave up after ${MAX_TX_ATTEMPTS} attempts`);
    expect(attempts).toBe(MAX_TX_ATTEMPTS);
    expect(s.stats).toEqual({ transactions: 1, retries: MAX_TX_ATTEMPTS - 1, serializationFailures: MAX_TX_ATTEMPTS });
    expect(s.commits.all).toBe(0);
  });

  test('a failed statement the body catches outside a savepoint: the transaction is refused, not reported committed, and its afterCommit never runs', async () => {
    const s = store();
    await ledgerTable(s);
    let told = 0;
    await expect(
      s.transaction(async () => {
        s.scope()!.afterCommit.push(() => told++);
        await s.run('INSERT INTO t (id) VALUES (1)');
        // PostgreSQL aborts the whole transaction here (SQLite only the statement); its COMMIT would roll back silently.
        await s.run('INSERT INTO t (id) VALUES (1)').catch(() => {});
      }),
    ).rejects.toThrow('already aborted');
    expect(told).toBe(0);
    expect(s.commits.all).toBe(0);
    expect(await s.all('SELECT id FROM t')).toEqual([]);
  });

  test('a failed statement the body catches inside a savepoint fails that savepoint; the transaction goes on', async () => {
    const s = store();
    await ledgerTable(s);
    await s.transaction(async () => {
      await s.run('INSERT INTO t (id) VALUES (1)');
      await expect(s.transaction(() => s.run('INSERT INTO t (id) VALUES (1)').catch(() => ({ changes: 0 })))).rejects.toThrow();
      await s.run('INSERT INTO t (id) VALUES (2)');
    });
    expect(await s.all('SELECT id FROM t ORDER BY id')).toEqual([{ id: 1n }, { id: 2n }]);
    expect(s.commits.all).toBe(1);
  });

  test('a serialization failure in a savepoint runs the whole transaction again even when the body catches it', async () => {
    const s = store();
    await ledgerTable(s);
    let attempts = 0;
    await s.transaction(async () => {
      attempts++;
      await s.run('INSERT INTO t (id) VALUES (?)', attempts);
      if (attempts === 1) await s.transaction(() => s.exec(conflict)).catch(() => {});
    });
    expect(attempts).toBe(2);
    expect(await s.all('SELECT id FROM t')).toEqual([{ id: 2n }]);
    expect(s.stats.retries).toBe(1);
  });
});

pg('openPgStore', () => {
  test('an empty database gets the schema and its meta rows; opening again checks version and network', async () => {
    const first = await openPgStore(dbUrl, { network: 'devnet', poolSize: 2 });
    opened.push(first);
    expect(await first.all('SELECT key, value FROM meta ORDER BY key')).toEqual([
      { key: 'network', value: 'devnet' },
      { key: 'oldest_serving', value: String(oldestServing(SCHEMA_VERSION)) },
      { key: 'schema_version', value: String(SCHEMA_VERSION) },
    ]);
    expect(await first.get('SELECT count(*) AS n FROM wallets')).toEqual({ n: 0n });
    expect(first.pool.max).toBe(2);
    await first.close();
    opened.pop();

    const again = await openPgStore(dbUrl, { network: 'devnet' });
    opened.push(again);
    expect(await again.get("SELECT value FROM meta WHERE key = 'network'")).toEqual({ value: 'devnet' });

    const other = openPgStore(dbUrl, { network: 'mainnet' });
    await expect(other).rejects.toThrow(DatabaseOpenError);
    await expect(other).rejects.toThrow('belongs to network "devnet", not "mainnet"; use a separate database per network');

    await again.run("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    await expect(openPgStore(dbUrl, { network: 'devnet' })).rejects.toThrow(`has schema version 99, newer than this binary's ${SCHEMA_VERSION}`);
  });

  test('a later release moves the ledger with its PostgreSQL bodies, in one step under the schema lock; a version without a body is refused and nothing changes', async () => {
    const first = await openPgStore(dbUrl, { network: 'devnet' });
    await first.close();
    const bodies = { [SCHEMA_VERSION + 1]: 'CREATE TABLE later_a (id BIGINT PRIMARY KEY)', [SCHEMA_VERSION + 2]: 'ALTER TABLE later_a ADD COLUMN note TEXT' };
    // Version 21 has no body: refused, and neither of the two before it was kept.
    const refused = openPgStore(dbUrl, { network: 'devnet' }, { target: SCHEMA_VERSION + 3, bodies });
    await expect(refused).rejects.toThrow(`no PostgreSQL body for migration ${SCHEMA_VERSION + 3}, so nothing was changed`);
    const probe = store();
    expect(await probe.get("SELECT to_regclass('later_a') IS NULL AS missing")).toEqual({ missing: 1n });
    const moved = await openPgStore(dbUrl, { network: 'devnet' }, { target: SCHEMA_VERSION + 2, bodies });
    opened.push(moved);
    expect(await moved.get("SELECT value FROM meta WHERE key = 'schema_version'")).toEqual({ value: String(SCHEMA_VERSION + 2) });
    await moved.run("INSERT INTO later_a (id, note) VALUES (1, 'kept')");
    // This binary refuses the moved ledger as newer.
    await expect(openPgStore(dbUrl, { network: 'devnet' })).rejects.toThrow(`has schema version ${SCHEMA_VERSION + 2}, newer than this binary's`);
  });

  test('a rolling upgrade: a ledger one version ahead, moved by a migration that only added, still opens on the release before; two ahead, or one that changed a meaning, does not', async () => {
    const first = await openPgStore(dbUrl, { network: 'devnet' });
    await first.close();
    const bodies = { [SCHEMA_VERSION + 1]: 'CREATE TABLE later_b (id BIGINT PRIMARY KEY)', [SCHEMA_VERSION + 2]: 'ALTER TABLE later_b RENAME COLUMN id TO key' };
    const added = await openPgStore(dbUrl, { network: 'devnet' }, { target: SCHEMA_VERSION + 1, bodies, compatible: new Set([SCHEMA_VERSION + 1]) });
    expect(await added.get("SELECT value FROM meta WHERE key = 'oldest_serving'")).toEqual({ value: String(SCHEMA_VERSION) });
    await added.close();
    const older = await openPgStore(dbUrl, { network: 'devnet' });
    opened.push(older);
    expect(await older.get("SELECT value FROM meta WHERE key = 'schema_version'")).toEqual({ value: String(SCHEMA_VERSION + 1) });
    const renamed = await openPgStore(dbUrl, { network: 'devnet' }, { target: SCHEMA_VERSION + 2, bodies, compatible: new Set([SCHEMA_VERSION + 1]) });
    opened.push(renamed);
    expect(await renamed.get("SELECT value FROM meta WHERE key = 'oldest_serving'")).toEqual({ value: String(SCHEMA_VERSION + 2) });
    await expect(openPgStore(dbUrl, { network: 'devnet' })).rejects.toThrow(`has schema version ${SCHEMA_VERSION + 2}, newer than this binary's ${SCHEMA_VERSION}`);
    await expect(openPgStore(dbUrl, { network: 'devnet' }, { target: SCHEMA_VERSION + 1, bodies })).rejects.toThrow('newer than this binary');
  });

  test('two nodes opening one empty database at once: one creates the schema, both open it', async () => {
    const [a, b] = await Promise.all([openPgStore(dbUrl, { network: 'devnet' }), openPgStore(dbUrl, { network: 'devnet' })]);
    opened.push(a, b);
    expect(await b.get("SELECT value FROM meta WHERE key = 'schema_version'")).toEqual({ value: String(SCHEMA_VERSION) });
  });

  test('refuses a database holding other tables, and says how to fix it', async () => {
    const s = store();
    await s.exec('CREATE TABLE invoices (id BIGINT)');
    await expect(openPgStore(dbUrl, { network: 'devnet' })).rejects.toThrow(/is not empty \(tables "invoices"\) but holds no agent-wallet ledger; set \[database\] url/);
  });

  test('refuses an unreachable server, an unknown user and a missing database, with the fix and no password', async () => {
    const closed = new URL(dbUrl);
    closed.port = '1';
    closed.password = 'hunter2';
    const unreachable = openPgStore(closed.toString(), { network: 'devnet' });
    await expect(unreachable).rejects.toThrow(/cannot reach PostgreSQL at postgres@127\.0\.0\.1:1\/t_\w+ .*; start the server or set \[database\] url/);
    await expect(unreachable).rejects.not.toThrow('hunter2');

    const stranger = new URL(dbUrl);
    stranger.username = 'nobody';
    await expect(openPgStore(stranger.toString(), { network: 'devnet' })).rejects.toThrow(/refused the login .*role "nobody" does not exist.*check the user and password/);

    const missing = new URL(dbUrl);
    missing.pathname = '/no_such_db';
    await expect(openPgStore(missing.toString(), { network: 'devnet' })).rejects.toThrow(/database "no_such_db" does not exist; create it/);

    await expect(openPgStore('sqlite://ledger.db', { network: 'devnet' })).rejects.toThrow('is not a PostgreSQL url');
  });
});
