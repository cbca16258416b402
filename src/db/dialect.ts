/**
 * SQLite → PostgreSQL spelling for the store's SQL. Statements are written once in SQLite's dialect
 * with positional `?` parameters (DESIGN §10.1); the PostgreSQL backend runs each through
 * `toPostgres`. What the two dialects only spell differently is rewritten; what has no safe
 * rewrite throws an `UntranslatableSql`, so a test finds it and the statement is written per dialect
 * instead of running with other meaning. The SQL is tokenized first, so nothing inside a string
 * literal, a quoted identifier or a comment is ever rewritten.
 */

/** Thrown for a SQLite construct with no safe PostgreSQL spelling; `construct` names it. */
export class UntranslatableSql extends Error {
  constructor(
    readonly construct: string,
    why: string,
    readonly sql: string,
  ) {
    super(`toPostgres: ${construct} cannot be translated (${why}); write this statement per dialect. SQL: ${sql}`);
    this.name = 'UntranslatableSql';
  }
}

type Kind = 'space' | 'comment' | 'string' | 'ident' | 'word' | 'param' | 'number' | 'punct';
interface Token {
  kind: Kind;
  text: string;
  /** Text inserted before / after the token by a rewrite. */
  before: string;
  after: string;
  depth: number;
}

const TOKEN =
  /(\s+)|(--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|('(?:[^']|'')*'?)|("(?:[^"]|"")*"?)|([A-Za-z_][A-Za-z0-9_$]*)|(\?\d*|[$:@][A-Za-z_]\w*)|(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)|(\|\||->>|->|==|!=|<>|<=|>=|::|[^\s])/y;
const KINDS: Kind[] = ['space', 'comment', 'string', 'ident', 'word', 'param', 'number', 'punct'];

function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  let depth = 0;
  for (let m = TOKEN.exec(sql); m; m = TOKEN.exec(sql)) {
    const kind = KINDS[m.slice(1).findIndex((g) => g !== undefined)] as Kind;
    if (m[0] === ')') depth--;
    tokens.push({ kind, text: m[0], before: '', after: '', depth });
    if (m[0] === '(') depth++;
  }
  return tokens;
}

/** SQLite-only words, wherever they stand. */
const SQLITE_WORDS: Record<string, string> = {
  PRAGMA: 'PostgreSQL has no PRAGMA',
  GLOB: 'PostgreSQL has no GLOB; use LIKE or a regular expression',
  REGEXP: "SQLite's REGEXP is an application function",
  ROWID: 'PostgreSQL tables have no rowid; order by a real column',
  _ROWID_: 'PostgreSQL tables have no rowid; order by a real column',
  AUTOINCREMENT: 'PostgreSQL uses identity columns',
  INDEXED: 'INDEXED BY / NOT INDEXED are SQLite planner hints',
  NOCASE: 'PostgreSQL has no NOCASE collation; compare lower() values',
};

/** SQLite-only functions (the word followed by `(`); JSON_* and SQLITE_* are matched by prefix. */
const SQLITE_FUNCTIONS: Record<string, string> = {
  TOTAL: 'SQLite float sum; PostgreSQL has none',
  JULIANDAY: 'SQLite date function',
  STRFTIME: 'SQLite date function',
  DATE: 'SQLite date function',
  TIME: 'SQLite date function',
  DATETIME: 'SQLite date function',
  UNIXEPOCH: 'SQLite date function',
  RANDOMBLOB: 'SQLite function; PostgreSQL uses gen_random_bytes',
  CHANGES: 'SQLite connection counter; use the store result or RETURNING',
  TOTAL_CHANGES: 'SQLite connection counter',
  LAST_INSERT_ROWID: 'SQLite connection counter; use RETURNING',
  GROUP_CONCAT: 'PostgreSQL spells it string_agg with a required separator',
  IIF: 'PostgreSQL has no IIF; use CASE',
  INSTR: 'PostgreSQL spells it strpos',
  HEX: 'PostgreSQL spells it encode(x, \'hex\') and upper-cases nothing',
  PRINTF: 'PostgreSQL spells it format with other directives',
  TYPEOF: 'PostgreSQL spells it pg_typeof with other names',
  JSON: 'SQLite JSON functions take paths PostgreSQL does not',
};

const STOP_LIKE = new Set(['AND', 'OR', 'THEN', 'WHEN', 'ELSE', 'END', 'ORDER', 'GROUP', 'LIMIT', 'OFFSET', 'HAVING', 'AS', 'FROM', 'WHERE', 'UNION', 'EXCEPT', 'INTERSECT', 'RETURNING', 'ON', 'IS', 'ESCAPE']);
const IS_OPERANDS = new Set(['NULL', 'TRUE', 'FALSE', 'DISTINCT', 'UNKNOWN']);

const cache = new Map<string, string>();

/**
 * The PostgreSQL spelling of a statement written in SQLite's dialect: `?` become `$1, $2, …`,
 * and the rewrites listed in `translate`. Memoised: the store sees the same statements again and again.
 * Throws `UntranslatableSql` for a construct that must be written per dialect.
 */
export function toPostgres(sql: string): string {
  let pg = cache.get(sql);
  if (pg === undefined) {
    pg = translate(sql);
    cache.set(sql, pg);
  }
  return pg;
}

function translate(sql: string): string {
  const t = tokenize(sql);
  const fail = (construct: string, why: string): never => {
    throw new UntranslatableSql(construct, why, sql);
  };
  const opened = t.filter((tok) => tok.text === '(').length;
  if (t.some((tok) => tok.depth < 0) || opened !== t.filter((tok) => tok.text === ')').length) fail('unbalanced parentheses', 'the statement does not parse');
  const code = t.map((_, i) => i).filter((i) => t[i]!.kind !== 'space' && t[i]!.kind !== 'comment');
  /** Position in `code` → token; undefined past the end. */
  const at = (k: number): Token | undefined => t[code[k] ?? -1];
  const word = (k: number): string => (at(k)?.kind === 'word' ? at(k)!.text.toUpperCase() : '');
  /** The `code` position of the `)` closing the `(` at position k. */
  const close = (k: number): number => {
    const d = at(k)!.depth;
    let j = k + 1;
    while (!(at(j)!.text === ')' && at(j)!.depth === d)) j++;
    return j;
  };
  /** Commas directly inside the parentheses opened at k. */
  const commas = (k: number): number => {
    let n = 0;
    for (let j = k + 1, end = close(k); j < end; j++) if (at(j)!.text === ',' && at(j)!.depth === at(k)!.depth + 1) n++;
    return n;
  };
  const drop = (k: number): void => {
    at(k)!.text = '';
    const next = t[code[k]! + 1];
    if (next?.kind === 'space') next.text = '';
  };

  let positional = 0;
  let numbered = false;
  for (let k = 0; k < code.length; k++) {
    const tok = at(k)!;
    const w = word(k);
    const call = at(k + 1)?.text === '(';

    if (tok.kind === 'param') {
      if (tok.text === '?') tok.text = `$${++positional}`;
      else if (tok.text.startsWith('?')) {
        numbered = true;
        tok.text = `$${tok.text.slice(1)}`;
      } else fail(`named parameter ${tok.text}`, 'the store binds positional ? only');
      if (numbered && positional > 0) fail('? mixed with ?NNN', 'SQLite numbers a bare ? after the largest ?NNN seen');
      continue;
    }
    if (tok.kind === 'punct') {
      if (tok.text === '==') tok.text = '=';
      else if (tok.text === '`' || tok.text === '[') fail(`${tok.text}-quoted identifier`, 'PostgreSQL quotes identifiers with "');
      else if (tok.text === '->' || tok.text === '->>') fail(`${tok.text} operator`, 'SQLite JSON paths differ from PostgreSQL keys');
      continue;
    }
    if (!w) continue;

    if (w in SQLITE_WORDS) fail(w, SQLITE_WORDS[w]!);
    if (w.startsWith('SQLITE_')) fail(w, 'SQLite system table');
    if (w === 'X' && t[code[k]! + 1]?.kind === 'string') fail("blob literal X'…'", "PostgreSQL spells bytea '\\x…'");
    if (call && (w in SQLITE_FUNCTIONS || w.startsWith('JSON_'))) fail(`${w}(`, SQLITE_FUNCTIONS[w] ?? SQLITE_FUNCTIONS.JSON!);
    if (w === 'BEGIN' && ['IMMEDIATE', 'EXCLUSIVE', 'DEFERRED'].includes(word(k + 1))) fail(`BEGIN ${word(k + 1)}`, 'PostgreSQL locks rows or uses SERIALIZABLE');
    if (w === 'REPLACE' && (k === 0 || at(k - 1)!.text === ';')) fail('REPLACE INTO', 'needs a conflict target');

    if (w === 'INSERT' && word(k + 1) === 'OR') {
      const action = word(k + 2);
      if (action !== 'IGNORE') fail(`INSERT OR ${action}`, action === 'REPLACE' ? 'needs a conflict target' : 'PostgreSQL has no conflict clause on INSERT');
      // SQLite's OR IGNORE also skips NOT NULL and CHECK failures; PostgreSQL's DO NOTHING only
      // conflicts on unique constraints, so a row that SQLite would skip for those raises here.
      drop(k + 1);
      drop(k + 2);
      let end = k + 3;
      while (at(end) && at(end)!.text !== ';') {
        if (word(end) === 'CONFLICT') fail('INSERT OR IGNORE with ON CONFLICT', 'two conflict clauses');
        end++;
      }
      let returning = k + 3;
      while (returning < end && !(word(returning) === 'RETURNING' && at(returning)!.depth === tok.depth)) returning++;
      if (returning < end) at(returning)!.before = 'ON CONFLICT DO NOTHING ';
      else at(end - 1)!.after += ' ON CONFLICT DO NOTHING';
    } else if (w === 'IFNULL' && call) tok.text = 'COALESCE';
    else if ((w === 'MAX' || w === 'MIN') && call && commas(k + 1) > 0) {
      // SQLite's scalar max/min is NULL when any argument is; GREATEST/LEAST skip NULLs.
      tok.text = w === 'MAX' ? 'GREATEST' : 'LEAST';
    } else if (w === 'SUM' && call) {
      // PostgreSQL's SUM(bigint) is NUMERIC, which Bun returns as a string: money stays bigint.
      const end = close(k + 1);
      if (['OVER', 'FILTER'].includes(word(end + 1))) fail(`SUM(…) ${word(end + 1)}`, 'the BIGINT cast would split the window');
      tok.before = 'CAST(' + tok.before;
      at(end)!.after = ' AS BIGINT)' + at(end)!.after;
    } else if (w === 'CAST' && call) {
      let as = close(k + 1) - 1;
      while (as > k && !(word(as) === 'AS' && at(as)!.depth === tok.depth + 1)) as--;
      const type = word(as + 1);
      // SQLite's INTEGER is 64-bit and its REAL 8-byte; PostgreSQL's INTEGER and REAL are half that.
      if (type === 'INTEGER' || type === 'INT') at(as + 1)!.text = 'BIGINT';
      else if (type === 'REAL') at(as + 1)!.text = 'DOUBLE PRECISION';
      else if (type === 'BLOB') fail('CAST(… AS BLOB)', 'PostgreSQL text and bytea do not convert by cast');
    } else if (w === 'LIKE') {
      // SQLite's LIKE ignores ASCII case and has no escape character; PostgreSQL's ILIKE ignores
      // case and escapes with a backslash unless told otherwise.
      tok.text = 'ILIKE';
      let end = k + 1;
      while (at(end) && at(end)!.depth >= tok.depth && !(at(end)!.depth === tok.depth && ([',', ';'].includes(at(end)!.text) || STOP_LIKE.has(word(end))))) end++;
      if (word(end) !== 'ESCAPE') at(end - 1)!.after += " ESCAPE ''";
    } else if (w === 'IS') {
      // SQLite's IS compares any two values, NULL-safe; PostgreSQL's IS takes NULL/TRUE/FALSE only.
      const not = word(k + 1) === 'NOT';
      if (!IS_OPERANDS.has(word(k + (not ? 2 : 1)))) {
        tok.text = not ? 'IS DISTINCT FROM' : 'IS NOT DISTINCT FROM';
        if (not) drop(k + 1);
      }
    }
  }
  return t.map((tok) => tok.before + tok.text + tok.after).join('');
}
