/**
 * Every CLI call by an agent starts a process, so the entry must not load the daemon: the static
 * imports reachable from src/main.ts stay clear of the HTTP server, the embedded chain and the
 * MCP SDK (commands load those with import() when they run).
 */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const SRC = join(import.meta.dir, '..', 'src');
const HEAVY = ['elysia', 'litesvm', '@modelcontextprotocol/sdk'];

/** Static (not type-only, not dynamic) import specifiers of a module. */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^import\s+(?!type\s)[^;]*?from\s+'([^']+)';/gm)].map((m) => m[1]!);
}

test('the static import graph of src/main.ts loads no HTTP server, embedded chain or MCP SDK', () => {
  const seen = new Set<string>();
  const heavy: string[] = [];
  const walk = (file: string, via: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) walk(resolve(dirname(file), spec), [...via, spec]);
      else if (HEAVY.some((h) => spec === h || spec.startsWith(`${h}/`))) heavy.push(`${[...via, spec].join(' → ')}`);
    }
  };
  walk(join(SRC, 'main.ts'), ['src/main.ts']);
  expect(seen.size).toBeGreaterThan(5);
  expect(heavy).toEqual([]);
});
