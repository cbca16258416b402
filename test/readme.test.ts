/** The README's "Built with" table names every runtime dependency of package.json. */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dir, '..');

/** The backticked names in the first cell of each row of the "Built with" table. */
function builtWithNames(readme: string): Set<string> {
  const start = readme.indexOf('\n## Built with\n');
  expect(start).toBeGreaterThan(-1);
  const end = readme.indexOf('\n## ', start + 1);
  const rows = readme
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| Package'));
  return new Set(rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)));
}

test('every runtime dependency in package.json has a row in the README "Built with" table', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const names = builtWithNames(readFileSync(join(root, 'README.md'), 'utf8'));
  const dependencies = Object.keys(pkg.dependencies);
  expect(dependencies.length).toBeGreaterThan(0);
  expect(dependencies.filter((d) => !names.has(d))).toEqual([]);
});
