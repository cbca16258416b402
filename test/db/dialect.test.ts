/** toPostgres: SQLite-dialect statements in PostgreSQL's spelling, or a throw naming what must be written per dialect. */
import { describe, expect, spyOn, test } from 'bun:test';
import { toPostgres, UntranslatableSql } from '../../src/db/dialect.ts';

describe('translates what the dialects spell differently', () => {
  const cases: [string, string, string][] = [
    ['numbers ? in order', 'SELECT * FROM t WHERE a = ? AND b IN (?, ?) LIMIT ? OFFSET ?', 'SELECT * FROM t WHERE a = $1 AND b IN ($2, $3) LIMIT $4 OFFSET $5'],
    [
      'leaves ? inside string literals, quoted identifiers and comments',
      `SELECT 'it''s ?' AS "q?", a -- why?\n FROM t /* ? */ WHERE b = ?`,
      `SELECT 'it''s ?' AS "q?", a -- why?\n FROM t /* ? */ WHERE b = $1`,
    ],
    ['numbered ?NNN keep their numbers', 'SELECT * FROM t WHERE a = ?1 OR b = ?1 AND c < ?2', 'SELECT * FROM t WHERE a = $1 OR b = $1 AND c < $2'],
    ['INSERT OR IGNORE becomes ON CONFLICT DO NOTHING at the end', 'INSERT OR IGNORE INTO t (a, b) VALUES (?, ?)', 'INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING'],
    [
      'INSERT OR IGNORE puts ON CONFLICT DO NOTHING before RETURNING',
      'insert or ignore into t (a) select x from u where y = ? returning a',
      'insert into t (a) select x from u where y = $1 ON CONFLICT DO NOTHING returning a',
    ],
    ['IFNULL becomes COALESCE', 'SELECT IFNULL(a, 0) FROM t', 'SELECT COALESCE(a, 0) FROM t'],
    [
      'two-argument MAX/MIN become GREATEST/LEAST, one-argument aggregates stay',
      'SELECT MAX(a, (SELECT MIN(x, y) FROM u WHERE z IN (1, 2))), MIN(b), max(c, ?, 3) FROM t',
      'SELECT GREATEST(a, (SELECT LEAST(x, y) FROM u WHERE z IN (1, 2))), MIN(b), GREATEST(c, $1, 3) FROM t',
    ],
    [
      'SUM is cast back to BIGINT (PostgreSQL sums bigint to NUMERIC)',
      'SELECT COALESCE(SUM(CASE WHEN a > 0 THEN a ELSE 0 END), 0) AS n, sum(b) FROM t',
      'SELECT COALESCE(CAST(SUM(CASE WHEN a > 0 THEN a ELSE 0 END) AS BIGINT), 0) AS n, CAST(sum(b) AS BIGINT) FROM t',
    ],
    ['CAST AS INTEGER becomes BIGINT, AS REAL DOUBLE PRECISION', 'SELECT CAST(a AS INTEGER), CAST(b / 2 AS REAL), CAST(c AS TEXT) FROM t', 'SELECT CAST(a AS BIGINT), CAST(b / 2 AS DOUBLE PRECISION), CAST(c AS TEXT) FROM t'],
    [
      "LIKE becomes ILIKE with SQLite's empty escape",
      "SELECT * FROM t WHERE a LIKE '%' || ? || '%' AND b NOT LIKE (? || 'x') OR c LIKE ? ESCAPE '!'",
      "SELECT * FROM t WHERE a ILIKE '%' || $1 || '%' ESCAPE '' AND b NOT ILIKE ($2 || 'x') ESCAPE '' OR c ILIKE $3 ESCAPE '!'",
    ],
    [
      'IS / IS NOT between values become IS [NOT] DISTINCT FROM; IS NULL stays',
      'SELECT * FROM t WHERE a IS ? AND b IS NOT ? AND c IS NULL AND d IS NOT NULL AND e IS NOT DISTINCT FROM f',
      'SELECT * FROM t WHERE a IS NOT DISTINCT FROM $1 AND b IS DISTINCT FROM $2 AND c IS NULL AND d IS NOT NULL AND e IS NOT DISTINCT FROM f',
    ],
    ['== becomes =', 'SELECT * FROM t WHERE a == ?', 'SELECT * FROM t WHERE a = $1'],
    [
      'concatenation, CASE, COALESCE, RETURNING and upserts change only in placeholders',
      "INSERT INTO t (k, v) VALUES (?, ? || '-x') ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = CASE WHEN t.n > ? THEN COALESCE(t.m, ?) ELSE 0 END RETURNING k",
      "INSERT INTO t (k, v) VALUES ($1, $2 || '-x') ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = CASE WHEN t.n > $3 THEN COALESCE(t.m, $4) ELSE 0 END RETURNING k",
    ],
    ['words that only look like SQLite functions stay (a column named total)', 'SELECT total, "rowid" FROM t', 'SELECT total, "rowid" FROM t'],
  ];
  for (const [name, sqlite, pg] of cases) test(name, () => expect(toPostgres(sqlite)).toBe(pg));
});

describe('throws, naming the construct and the statement, for what must be written per dialect', () => {
  const cases: [string, string][] = [
    ['INSERT OR REPLACE', 'INSERT OR REPLACE INTO t (a) VALUES (?)'],
    ['REPLACE INTO', 'REPLACE INTO t (a) VALUES (?)'],
    ['INSERT OR ROLLBACK', 'INSERT OR ROLLBACK INTO t (a) VALUES (?)'],
    ['INSERT OR IGNORE with ON CONFLICT', 'INSERT OR IGNORE INTO t (a) VALUES (?) ON CONFLICT (a) DO NOTHING'],
    ['TOTAL(', 'SELECT TOTAL(a) FROM t'],
    ['SUM(…) OVER', 'SELECT SUM(a) OVER (ORDER BY b) FROM t'],
    ['CAST(… AS BLOB)', 'SELECT CAST(a AS BLOB) FROM t'],
    ['BEGIN IMMEDIATE', 'BEGIN IMMEDIATE'],
    ['PRAGMA', 'PRAGMA user_version'],
    ['SQLITE_MASTER', "SELECT name FROM sqlite_master WHERE type = 'table'"],
    ['JULIANDAY(', "SELECT julianday('now')"],
    ['STRFTIME(', "SELECT strftime('%s', 'now')"],
    ['RANDOMBLOB(', 'SELECT randomblob(16)'],
    ['JSON_EXTRACT(', "SELECT json_extract(data, '$.id') FROM events"],
    ['GLOB', "SELECT * FROM t WHERE a GLOB 'x*'"],
    ['CHANGES(', 'SELECT changes()'],
    ['TOTAL_CHANGES(', 'SELECT total_changes()'],
    ['LAST_INSERT_ROWID(', 'SELECT last_insert_rowid()'],
    ['ROWID', 'SELECT * FROM t ORDER BY created_at, rowid'],
    ['INDEXED', "SELECT * FROM t INDEXED BY t_status WHERE status = 'x'"],
    ['NOCASE', 'SELECT * FROM t ORDER BY name COLLATE NOCASE'],
    ['GROUP_CONCAT(', 'SELECT group_concat(a) FROM t'],
    ["blob literal X'…'", "SELECT * FROM t WHERE k = X'00ff'"],
    ['named parameter $id', 'SELECT * FROM t WHERE id = $id'],
    ['named parameter :id', 'SELECT * FROM t WHERE id = :id'],
    ['? mixed with ?NNN', 'SELECT * FROM t WHERE a = ?1 AND b = ?'],
    ['`-quoted identifier', 'SELECT `a` FROM t'],
    ['unbalanced parentheses', 'SELECT (a FROM t'],
  ];
  for (const [construct, sql] of cases) {
    test(construct, () => {
      let thrown: unknown;
      try {
        toPostgres(sql);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(UntranslatableSql);
      expect((thrown as UntranslatableSql).construct).toBe(construct);
      expect((thrown as Error).message).toContain(construct);
      expect((thrown as Error).message).toContain(sql);
    });
  }
});

test('a statement seen before is a map lookup: the second call tokenizes nothing', () => {
  const sql = 'SELECT * FROM memo WHERE a = ? AND b LIKE ?';
  const first = toPostgres(sql);
  const exec = spyOn(RegExp.prototype, 'exec');
  try {
    expect(toPostgres(`${sql}`)).toBe(first);
    expect(exec).not.toHaveBeenCalled();
  } finally {
    exec.mockRestore();
  }
});
