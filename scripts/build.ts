/**
 * Builds the single executable `dist/agent-wallet` (DESIGN §1). The compiled binary must not
 * pick up a stray .env or bunfig.toml from the directory it is started in.
 */
import { mkdirSync } from 'node:fs';

const target = process.env.AGENT_WALLET_BUILD_TARGET ?? 'bun-linux-x64';
mkdirSync('dist', { recursive: true });
const args = [
  'build',
  '--compile',
  `--target=${target}`,
  '--bytecode',
  '--minify',
  '--sourcemap',
  '--no-compile-autoload-dotenv',
  '--no-compile-autoload-bunfig',
  'src/main.ts',
  // Worker threads are separate entry points of the executable (src/frost/pool.ts, src/db/durability.ts).
  'src/frost/worker.ts',
  'src/db/sync-worker.ts',
  'src/db/checkpoint-worker.ts',
  '--outfile',
  'dist/agent-wallet',
];
console.error(`building dist/agent-wallet (${target})…`);
const proc = Bun.spawnSync([process.execPath, ...args], { stdout: 'inherit', stderr: 'inherit' });
process.exit(proc.exitCode ?? 1);
