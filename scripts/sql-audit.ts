/**
 * Audits the store's SQL against PostgreSQL: every SQL string literal in src/db/*.ts is translated
 * with toPostgres and PREPAREd on a PostgreSQL ≥ 15 database holding src/db/pg/schema.sql (statements
 * PREPARE cannot take — DDL — run in a transaction that is rolled back). Prints each statement that
 * fails to translate or to prepare, with its file, line and the reason; exits 1 if any fail.
 *   bun scripts/sql-audit.ts [--url postgres://…]   (without --url: a throwaway cluster)
 * Files in SQLITE_ONLY are not read. A template literal's `${…}` pieces are filled with a plausible value (a const of the same file,
 * its `postgres` entry for a per-dialect object, a placeholder list, the longest string a conditional can give); those it cannot
 * fill are listed as skipped. `$name` parameters become `?` first, as PgStore binds them.
 */
import { SQL } from 'bun';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { toPostgres, UntranslatableSql } from '../src/db/dialect.ts';
import { startPgCluster, type PgCluster } from '../test/helpers/pg.ts';

const ROOT = join(import.meta.dir, '..');
const DB_DIR = join(ROOT, 'src/db');
/** The embedded backend's own machinery (the SQLite file, its WAL, the paywall's local journal): never run on PostgreSQL. */
const SQLITE_ONLY = new Set([
  'open.ts',
  'checkpoint-worker.ts',
  'durability.ts',
  'maintenance.ts',
  'header-write.ts',
  'sqlite-store.ts',
  'paywall-journal.ts',
  'backup.ts',
  // Reads the SQLite source; what it writes to PostgreSQL is built from the copied tables' names.
  'copy-ledger.ts',
]);
const SQL_START = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|VALUES|REPLACE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|VACUUM|ANALYZE|REINDEX)\b/i;
const PREPARABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|VALUES)\b/i;
const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|END)\b/i;

/** A JS string or template literal: its text, or for a template its pieces and `${…}` sources. */
interface Literal {
  start: number;
  end: number;
  strings: string[];
  exprs: string[];
  nested: boolean;
}

/** Skips a JS expression from `i` (just after `${` or `=`) to the `}`/`;` that ends it; literals met are collected. */
function skipExpression(src: string, i: number, stop: string, out: Literal[], nested: boolean): number {
  let depth = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (depth === 0 && stop.includes(c)) return i;
    if (c === '/' && src[i + 1] === '/') i = src.indexOf('\n', i) === -1 ? src.length : src.indexOf('\n', i);
    else if (c === '/' && src[i + 1] === '*') i = src.indexOf('*/', i + 2) + 2;
    else if (c === "'" || c === '"' || c === '`') i = readLiteral(src, i, out, nested);
    else {
      if ('([{'.includes(c)) depth++;
      if (')]}'.includes(c)) depth--;
      i++;
    }
  }
  return i;
}

const UNESCAPE: Record<string, string> = { n: '\n', t: '\t', r: '\r' };

/** Reads the literal opening at `i`, pushes it (and any nested in its `${…}`) to `out`, returns the index after it. */
function readLiteral(src: string, i: number, out: Literal[], nested: boolean): number {
  const quote = src[i]!;
  const lit: Literal = { start: i, end: i, strings: [''], exprs: [], nested };
  out.push(lit);
  for (i++; i < src.length && src[i] !== quote; ) {
    if (src[i] === '\\') {
      lit.strings[lit.strings.length - 1] += UNESCAPE[src[i + 1]!] ?? src[i + 1]!;
      i += 2;
    } else if (quote === '`' && src.startsWith('${', i)) {
      const end = skipExpression(src, i + 2, '}', out, true);
      lit.exprs.push(src.slice(i + 2, end).trim());
      lit.strings.push('');
      i = end + 1;
    } else lit.strings[lit.strings.length - 1] += src[i++]!;
  }
  lit.end = i + 1;
  return i + 1;
}

/** Every string and template literal in `src`, outermost first. */
function literals(src: string): Literal[] {
  const out: Literal[] = [];
  skipExpression(src, 0, '', out, false);
  return out;
}

/** Fills a literal's `${…}` pieces from `file`'s source before `pos`; null when a piece has no plausible value. */
function fill(lit: Literal, file: string, pos: number, hops = 0): string | null {
  let text = lit.strings[0]!;
  for (const [n, expr] of lit.exprs.entries()) {
    const value = valueOf(expr, file, pos, hops);
    if (value === null) return null;
    text += value + lit.strings[n + 1]!;
  }
  return text;
}

/** The initializer of the last declaration of `name` before `pos`, and where it starts. */
function declaration(name: string, file: string, pos: number): { init: string; at: number } | null {
  const decl = [...file.slice(0, pos).matchAll(new RegExp(`\\b(?:const|let|var)\\s+${name.replace('$', '\\$')}\\b\\s*(?::[^=]+)?=`, 'g'))].at(-1);
  if (!decl) return null;
  const at = decl.index + decl[0].length;
  return { init: file.slice(at, skipExpression(file, at, ';\n', [], false)).trim(), at };
}

function valueOf(expr: string, file: string, pos: number, hops: number): string | null {
  if (hops > 5) return null;
  if (/\.map\(\s*\(\)\s*=>\s*['"`]\?['"`]\s*\)\s*\.join\(/.test(expr)) return '?, ?';
  if (/^-?\d+n?$/.test(expr)) return expr.replace(/n$/, '');
  const joined = /^([A-Za-z_$][\w$]*)\.join\((['"`])(.*)\2\)$/.exec(expr);
  if (joined) return joinedArray(joined[1]!, joined[3]!, file, pos, hops);
  const named = /^([A-Za-z_$][\w$]*)(\[[^\]]*\])?$/.exec(expr);
  if (named) {
    const decl = declaration(named[1]!, file, pos);
    if (!decl) return null;
    // An object of strings indexed by a runtime key: its PostgreSQL spelling if it is per dialect, else its first value.
    if (named[2]) {
      if (!decl.init.startsWith('{')) return null;
      const pg = /\bpostgres\s*:\s*/.exec(decl.init);
      return pg ? firstString(decl.init.slice(pg.index + pg[0].length), file, decl.at, hops) : firstString(decl.init, file, decl.at, hops);
    }
    return valueOf(decl.init, file, decl.at, hops + 1);
  }
  const top = literals(expr).filter((l) => !l.nested);
  if (top.length === 1 && top[0]!.start === 0 && top[0]!.end === expr.length) return fill(top[0]!, file, pos, hops + 1);
  // A conditional or a default: the longest string it can give (the most SQL to check).
  if (!/\?|\|\||\?\?/.test(expr)) return null;
  const values = top.map((l) => fill(l, file, pos, hops + 1)).filter((v) => v !== null);
  return values.length === 0 ? null : values.reduce((a, b) => (b.length > a.length ? b : a));
}

/** `name.join(sep)` for an array declared with literals and grown by `name.push(literal)`: every piece, joined. */
function joinedArray(name: string, sep: string, file: string, pos: number, hops: number): string | null {
  const decl = declaration(name, file, pos);
  if (!decl?.init.startsWith('[')) return null;
  const pieces = literals(decl.init).filter((l) => !l.nested).map((l) => fill(l, file, decl.at, hops + 1));
  for (const push of file.slice(decl.at, pos).matchAll(new RegExp(`\\b${name.replace('$', '\\$')}\\.push\\(\\s*`, 'g'))) {
    const at = decl.at + push.index + push[0].length;
    const first = literals(file.slice(at, skipExpression(file, at, ')', [], false))).find((l) => !l.nested);
    if (first) pieces.push(fill(first, file, at, hops + 1));
  }
  return pieces.includes(null) ? null : pieces.join(sep);
}

function firstString(init: string, file: string, pos: number, hops: number): string | null {
  const first = literals(init).find((l) => !l.nested);
  return first ? fill(first, file, pos, hops + 1) : null;
}

interface Statement {
  where: string;
  sql: string;
}

function extract(): { statements: Statement[]; skipped: Statement[] } {
  const statements: Statement[] = [];
  const skipped: Statement[] = [];
  for (const name of readdirSync(DB_DIR).filter((n) => n.endsWith('.ts') && !SQLITE_ONLY.has(n)).sort()) {
    const path = join(DB_DIR, name);
    const file = readFileSync(path, 'utf8');
    for (const lit of literals(file)) {
      if (!SQL_START.test(lit.strings[0]!)) continue;
      const where = `${relative(ROOT, path)}:${file.slice(0, lit.start).split('\n').length}`;
      const sql = fill(lit, file, lit.start);
      if (sql === null) skipped.push({ where, sql: file.slice(lit.start, lit.end) });
      else statements.push({ where, sql });
    }
  }
  return { statements, skipped };
}

/** The reason PostgreSQL refuses `pg`, or null when it prepares (or, for DDL, runs). */
async function refusal(db: SQL, pg: string, n: number): Promise<string | null> {
  try {
    if (PREPARABLE.test(pg)) {
      await db.unsafe(`PREPARE audit_${n} AS ${pg}`);
      const [{ types }] = await db.unsafe(`SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = 'audit_${n}'`);
      await db.unsafe(`DEALLOCATE audit_${n}`);
      // PREPARE accepts a parameter in a boolean place, but the store binds numbers there (SQLite has no booleans), which PostgreSQL refuses at run time.
      const bool = (types as string[]).indexOf('boolean');
      if (bool >= 0) return `parameter $${bool + 1} stands where PostgreSQL wants a boolean; the store binds 1/0 there: compare it (? = 1)`;
    } else if (!TRANSACTION_CONTROL.test(pg)) {
      const rolledBack = new Error('rolled back');
      await db
        .begin(async (tx) => {
          await tx.unsafe(pg);
          throw rolledBack;
        })
        .catch((err: unknown) => {
          if (err !== rolledBack) throw err;
        });
    }
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

const NAMED = /('(?:[^']|'')*'?)|("(?:[^"]|"")*"?)|(--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|([A-Za-z_][A-Za-z0-9_$]*)|\$([A-Za-z_]\w*)|[\s\S]/y;

/** `$name` parameters → `?` (PgStore binds them positionally in order of appearance); strings, identifiers and comments kept. */
function positional(sql: string): string {
  let text = '';
  NAMED.lastIndex = 0;
  for (let m = NAMED.exec(sql); m; m = NAMED.exec(sql)) text += m[5] === undefined ? m[0] : '?';
  return text;
}

const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim();

async function main(): Promise<number> {
  const urlFlag = process.argv.indexOf('--url');
  let cluster: PgCluster | null = null;
  const url = urlFlag > 0 ? process.argv[urlFlag + 1]! : (cluster = await startPgCluster()).url;
  const name = `aw_audit_${process.pid}`;
  const server = new SQL(url, { bigint: true, max: 1 });
  await server.unsafe(`CREATE DATABASE ${name}`);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${name}`;
  const db = new SQL(dbUrl.toString(), { bigint: true, max: 1 });
  try {
    await db.unsafe(readFileSync(join(DB_DIR, 'pg/schema.sql'), 'utf8'));
    const { statements, skipped } = extract();
    let failed = 0;
    for (const [n, s] of statements.entries()) {
      let reason: string | null;
      let pg = '';
      try {
        pg = toPostgres(positional(s.sql));
        reason = await refusal(db, pg, n);
      } catch (err) {
        if (!(err instanceof UntranslatableSql)) throw err;
        reason = `untranslatable: ${err.construct}`;
      }
      if (reason === null) continue;
      failed++;
      console.log(`${s.where}  ${reason}\n    ${oneLine(pg || s.sql)}\n`);
    }
    for (const s of skipped) console.log(`${s.where}  skipped (a \${…} piece has no plausible value)\n    ${oneLine(s.sql)}\n`);
    console.log(`${statements.length} statements: ${statements.length - failed} ok, ${failed} failed; ${skipped.length} skipped`);
    return failed > 0 ? 1 : 0;
  } finally {
    await db.close();
    await server.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.close();
    await cluster?.stop();
  }
}

process.exit(await main());
