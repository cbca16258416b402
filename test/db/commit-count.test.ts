import { expect, test } from 'bun:test';
import { commitsFrom, commitsOf, countedAs } from '../../src/db/commit-count.ts';
import { openDatabase } from '../../src/db/open.ts';

test('the ledger counts its commits: one per outermost transaction in every mode, none for a nested one or one that rolled back', () => {
  const db = openDatabase(':memory:', { network: 'simnet' });
  const start = commitsOf(db);
  db.run('CREATE TABLE t (x INTEGER) STRICT');
  const insert = db.transaction((x: number) => db.query('INSERT INTO t VALUES (?)').run(x));
  insert(1);
  insert.immediate(2);
  insert.deferred(3);
  insert.exclusive(4);
  db.transaction(() => {
    insert(5);
    insert(6);
  }).immediate();
  expect(() =>
    db.transaction(() => {
      insert(7);
      throw new Error('refused');
    }).immediate(),
  ).toThrow('refused');
  expect(commitsOf(db) - start).toBe(5);
  expect(db.query('SELECT count(*) AS n FROM t').get()).toEqual({ n: 6n });
  db.close();
});

test('commits made inside countedAs are counted under its origin as well, nested origins restore the outer one, and commits outside it under none', () => {
  const db = openDatabase(':memory:', { network: 'simnet' });
  db.run('CREATE TABLE t (x INTEGER) STRICT');
  const insert = db.transaction((x: number) => db.query('INSERT INTO t VALUES (?)').run(x));
  const start = commitsOf(db);
  countedAs('outer', () => {
    insert(1);
    countedAs('inner', () => insert.immediate(2));
    insert(3);
  });
  insert(4);
  expect(commitsOf(db) - start).toBe(4);
  expect(commitsFrom(db, 'outer')).toBe(2);
  expect(commitsFrom(db, 'inner')).toBe(1);
  expect(commitsFrom(db, 'none')).toBe(0);
  db.close();
});
