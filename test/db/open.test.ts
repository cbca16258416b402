import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { join } from 'node:path';
import { DatabaseOpenError, SCHEMA_VERSION, openDatabase } from '../../src/db/open.ts';
import { tempDir } from '../helpers/services.ts';

describe('openDatabase', () => {
  test('pragmas read back as DESIGN §5 says', async () => {
    const db = openDatabase(join(tempDir(), 'wallet.db'), { network: 'simnet' });
    const pragma = async (name: string) => Object.values((await db.get(`PRAGMA ${name}`)) as object)[0];
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('synchronous')).toBe(2n); // FULL
    expect(await pragma('foreign_keys')).toBe(1n);
    expect(await pragma('busy_timeout')).toBe(5000n);
    expect(await pragma('user_version')).toBe(BigInt(SCHEMA_VERSION));
    expect(await db.get('PRAGMA integrity_check')).toEqual({ integrity_check: 'ok' });
    db.close();
  });

  test('integers come back as bigint (safeIntegers) and tables are STRICT', async () => {
    const db = openDatabase(':memory:', { network: 'simnet' });
    expect(typeof ((await db.get('SELECT 1 AS n')) as { n: unknown }).n).toBe('bigint');
    expect(async () => await db.run("INSERT INTO owners (owner_id, email, created_at) VALUES ('own_x', 'a@b.c', 'not a number')")).toThrow();
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

  test('reopening keeps data and schema version', async () => {
    const path = join(tempDir(), 'wallet.db');
    const db = openDatabase(path, { network: 'simnet' });
    await db.run("INSERT INTO owners (owner_id, email, created_at) VALUES ('own_1', 'a@b.c', 1)");
    db.close();
    const again = openDatabase(path, { network: 'simnet' });
    expect(await again.get('SELECT email FROM owners')).toEqual({ email: 'a@b.c' });
    again.close();
  });
});
