import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { join } from 'node:path';
import { DatabaseOpenError, SCHEMA_VERSION, openDatabase } from '../../src/db/open.ts';
import { tempDir } from '../helpers/services.ts';

describe('openDatabase', () => {
  test('pragmas read back as DESIGN §5 says', () => {
    const db = openDatabase(join(tempDir(), 'wallet.db'), { network: 'simnet' });
    const pragma = (name: string) => Object.values(db.query(`PRAGMA ${name}`).get() as object)[0];
    expect(pragma('journal_mode')).toBe('wal');
    expect(pragma('synchronous')).toBe(2n); // FULL
    expect(pragma('foreign_keys')).toBe(1n);
    expect(pragma('busy_timeout')).toBe(5000n);
    expect(pragma('user_version')).toBe(BigInt(SCHEMA_VERSION));
    expect(db.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    db.close();
  });

  test('integers come back as bigint (safeIntegers) and tables are STRICT', () => {
    const db = openDatabase(':memory:', { network: 'simnet' });
    expect(typeof (db.query('SELECT 1 AS n').get() as { n: unknown }).n).toBe('bigint');
    expect(() => db.run("INSERT INTO owners (owner_id, email, created_at) VALUES ('own_x', 'a@b.c', 'not a number')")).toThrow();
    db.close();
  });

  test('a database newer than this binary is refused with a clear message', () => {
    const path = join(tempDir(), 'wallet.db');
    openDatabase(path, { network: 'simnet' }).close();
    const raw = new Database(path);
    raw.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openDatabase(path, { network: 'simnet' })).toThrow(DatabaseOpenError);
    expect(() => openDatabase(path, { network: 'simnet' })).toThrow(/newer than this binary/);
  });

  test('a database of another network is refused', () => {
    const path = join(tempDir(), 'wallet.db');
    openDatabase(path, { network: 'simnet' }).close();
    expect(() => openDatabase(path, { network: 'mainnet' })).toThrow(/belongs to network "simnet"/);
  });

  test('reopening keeps data and schema version', () => {
    const path = join(tempDir(), 'wallet.db');
    const db = openDatabase(path, { network: 'simnet' });
    db.run("INSERT INTO owners (owner_id, email, created_at) VALUES ('own_1', 'a@b.c', 1)");
    db.close();
    const again = openDatabase(path, { network: 'simnet' });
    expect(again.query('SELECT email FROM owners').get()).toEqual({ email: 'a@b.c' });
    again.close();
  });
});
