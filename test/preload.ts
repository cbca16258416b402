/**
 * Runs before any test file imports src/: isolates every test run from the developer's
 * machine (no real home, no credentials from the environment, no default ports).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

for (const key of Object.keys(process.env)) {
  if (key.startsWith('AGENT_WALLET_')) delete process.env[key];
}
const root = mkdtempSync(join(tmpdir(), 'aw-test-'));
process.env.AGENT_WALLET_HOME = join(root, 'home');
process.env.NO_COLOR = '1';
