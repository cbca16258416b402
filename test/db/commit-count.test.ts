import { expect, test } from 'bun:test';
import { commitsFrom, commitsOf } from '../../src/db/commit-count.ts';
import { openDatabase } from '../../src/db/open.ts';

test('the ledger counts its commits: one per outermost transaction, none for a nested one or one that rolled back', async () => {
  const db = openDatabase(':memory:', { network: 'simnet' });
  const start = commitsOf(db);
  await db.exec('CREATE TABLE t (x INTEGER) STRICT');
  const insert = async (x: number) => await db.transaction(async () => await db.run('INSERT INTO t VALUES (?)', x));
  await insert(1);
  await insert(2);
  await db.transaction(async () => {
    await insert(3);
    await insert(4);
  });
  const refused = db.transaction(async () => {
    await insert(5);
    throw new Error('refused');
  });
  await expect(refused).rejects.toThrow('refused');
  expect(commitsOf(db) - start).toBe(3);
  expect(await db.get('SELECT count(*) AS n FROM t')).toEqual({ n: 4n });
  await db.close();
});

test('a transaction begun with an origin is counted under it as well; those without one under none', async () => {
  const db = openDatabase(':memory:', { network: 'simnet' });
  await db.exec('CREATE TABLE t (x INTEGER) STRICT');
  const start = commitsOf(db);
  await db.transaction(async () => await db.run('INSERT INTO t VALUES (1)'), { origin: 'outer' });
  await db.transaction(async () => await db.run('INSERT INTO t VALUES (2)'), { origin: 'inner' });
  await db.transaction(async () => await db.run('INSERT INTO t VALUES (3)'), { origin: 'outer' });
  await db.transaction(async () => await db.run('INSERT INTO t VALUES (4)'));
  expect(commitsOf(db) - start).toBe(4);
  expect(commitsFrom(db, 'outer')).toBe(2);
  expect(commitsFrom(db, 'inner')).toBe(1);
  expect(commitsFrom(db, 'none')).toBe(0);
  await db.close();
});
