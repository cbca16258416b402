/**
 * One-way layers (issue 17): every import in src/ points to its own layer or one below it.
 * Nothing below the actions (payments, earning, webhooks, x402, mail, jobs, ops, frost, db,
 * domain, solana, net, contract, simnet, client) reaches up into api/, actions/, web/, cli/,
 * mcp/ or daemon/. A shared piece goes DOWN to the lowest layer that needs it; this test has no
 * list of exceptions. And some layers skip one below them: storage is behind ports (issue 41).
 */
import { expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const src = join(import.meta.dir, '..', 'src');

/**
 * The layers, top first; members are the directories and the top-level files of src/. A module
 * may import its own layer and any layer below, never one above. Modules of one layer may import
 * each other (a payment settles an earning, a contract names a domain rule).
 */
const LAYERS: readonly (readonly [name: string, members: readonly string[]])[] = [
  // Processes: parse argv, start the daemon, the MCP server, the embedded chain.
  ['entry', ['main.ts', 'cli', 'mcp', 'daemon']],
  // HTTP: routing, auth, the envelope, the pages.
  ['http', ['api', 'web']],
  // The action table: one handler per contract entry.
  ['actions', ['actions']],
  // What the actions call into, and the jobs and operations that drive the same services.
  ['services', ['payments', 'earning', 'webhooks', 'x402', 'mail', 'jobs', 'ops', 'evidence', 'owner', 'services.ts', 'action-context.ts', 'params.ts', 'config.ts']],
  // The agent's side: its keys, its FROST half, its HTTP calls.
  ['client', ['client']],
  // Custody and the embedded chain.
  ['custody', ['frost', 'simnet']],
  // Storage, the chain's RPC, outbound HTTP.
  ['io', ['db', 'solana', 'net']],
  // Pure rules, the wire contract, and what every layer may take: the error type, metrics, logging.
  ['base', ['domain', 'contract', 'errors.ts', 'metrics.ts', 'log.ts', 'version.ts', 'crash-points.ts', 'secret-files.ts', 'thread-priority.ts', 'loop-turns.ts', 'sql.d.ts']],
];

/**
 * Members that import nothing from another one although it is below them (issue 41): the FROST
 * coordinator keeps its rounds through ports it defines (frost/signing-ledger.ts, dkg-ledger.ts)
 * that db/ implements, and the agent's side has no ledger.
 */
const APART: readonly (readonly [from: string, to: string])[] = [
  ['frost', 'db'],
  ['client', 'db'],
];

const rank = new Map(LAYERS.flatMap(([, members], i) => members.map((m) => [m, LAYERS.length - i] as const)));
const layerName = new Map(LAYERS.flatMap(([name, members]) => members.map((m) => [m, name] as const)));

interface Import {
  specifier: string;
  line: number;
}

/**
 * Every module specifier of a source file: static imports and re-exports (type-only ones too, and
 * over several lines), side-effect imports and dynamic imports.
 */
function importsOf(source: string): Import[] {
  const patterns = [
    /^[ \t]*(?:import|export)\s+(?:type\s+)?[\w$\s{},*]*?\s*from\s*(['"])([^'"]+)\1/gm,
    /^[ \t]*import\s*(['"])([^'"]+)\1/gm,
    /\bimport\s*\(\s*(['"])([^'"]+)\1\s*\)/g,
  ];
  const found: Import[] = [];
  for (const pattern of patterns) {
    for (const m of source.matchAll(pattern)) {
      const at = m.index + m[0].lastIndexOf(m[2]!);
      found.push({ specifier: m[2]!, line: source.slice(0, at).split('\n').length });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The member of `LAYERS` a path under src/ belongs to: its first path segment. */
const memberOf = (path: string) => relative(src, path).split('/')[0]!;

test('the import reader sees every form of import', () => {
  const source = [
    "import type { ActionContext } from '../actions/registry.ts';",
    'import {',
    '  a,',
    '  type B,',
    "} from '../api/errors.ts';",
    "export { c } from './c.ts';",
    "export * from './d.ts';",
    "import * as e from 'node:fs';",
    "import './side-effect.ts';",
    "import pkg from '../package.json' with { type: 'json' };",
    'async function f() {',
    "  const { g } = await import('../web/g.ts');",
    '}',
    "const s = 'not an import from \"../cli/x.ts\"';",
  ].join('\n');
  expect(importsOf(source)).toEqual([
    { specifier: '../actions/registry.ts', line: 1 },
    { specifier: '../api/errors.ts', line: 5 },
    { specifier: './c.ts', line: 6 },
    { specifier: './d.ts', line: 7 },
    { specifier: 'node:fs', line: 8 },
    { specifier: './side-effect.ts', line: 9 },
    { specifier: '../package.json', line: 10 },
    { specifier: '../web/g.ts', line: 12 },
  ]);
});

test('every directory and top-level file of src/ has a layer', () => {
  const members = readdirSync(src);
  expect(members.filter((m) => !rank.has(m))).toEqual([]);
  expect([...rank.keys()].filter((m) => !members.includes(m))).toEqual([]);
});

test('no module imports a layer above its own', () => {
  const files = sourceFiles(src);
  let relativeImports = 0;
  const violations: string[] = [];
  for (const file of files) {
    const from = memberOf(file);
    for (const { specifier, line } of importsOf(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = resolve(dirname(file), specifier);
      if (relative(src, target).startsWith('..')) continue; // package.json, schema.sql: not a layer
      relativeImports++;
      const to = memberOf(target);
      if ((rank.get(to) ?? 0) > (rank.get(from) ?? 0)) {
        violations.push(`src/${relative(src, file)}:${line} imports ${specifier} (${from} is in layer "${layerName.get(from)}", ${to} in "${layerName.get(to)}" above it)`);
      }
    }
  }
  expect(files.length).toBeGreaterThan(100);
  expect(relativeImports).toBeGreaterThan(500);
  expect(violations).toEqual([]);
});

test('the members kept apart import nothing from each other', () => {
  const violations: string[] = [];
  for (const file of sourceFiles(src)) {
    const from = memberOf(file);
    for (const { specifier, line } of importsOf(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const to = memberOf(resolve(dirname(file), specifier));
      if (APART.some(([a, b]) => a === from && b === to)) violations.push(`src/${relative(src, file)}:${line} imports ${specifier} (${from}/ may not import ${to}/)`);
    }
  }
  expect(APART.every(([a, b]) => rank.has(a) && rank.has(b))).toBe(true);
  expect(violations).toEqual([]);
});
