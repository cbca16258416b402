/**
 * `agent-wallet simnet [--port N] [--data-dir DIR] [--slot-ms MS]`: the embedded chain alone, for
 * tools that want a local Solana JSON-RPC with USDC (kit clients, `solana -u localhost`).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parsePort, UsageError } from './usage.ts';

export async function simnetCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { port: { type: 'string' }, 'data-dir': { type: 'string' }, 'slot-ms': { type: 'string' } }, strict: true, allowPositionals: true });
  if (positionals.length > 0) throw new UsageError('usage: agent-wallet simnet [--port N] [--data-dir DIR] [--slot-ms MS]');
  const slotMs = values['slot-ms'] === undefined ? 400 : Number(values['slot-ms']);
  if (!Number.isInteger(slotMs) || slotMs < 10) throw new UsageError('--slot-ms must be a whole number of milliseconds ≥ 10');
  const dataDir = resolve(values['data-dir'] ?? './data');
  // The compiled binary unpacks LiteSVM's native addon into TMPDIR: keep it private and exec-allowed.
  const tmp = join(dataDir, 'tmp');
  mkdirSync(tmp, { recursive: true, mode: 0o700 });
  process.env.TMPDIR = tmp;
  // Listen for signals before starting: a stop requested during start-up waits for it, then stops cleanly.
  const signalled = new Promise<void>((done) => {
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
  });
  const { startSimnet } = await import('../simnet/index.ts');
  const simnet = await startSimnet({ port: parsePort('--port', values.port) ?? 8899, stateFile: join(dataDir, 'simnet', 'state.bin'), slotMs });
  process.stdout.write(`${JSON.stringify({ msg: 'simnet started', rpc_url: simnet.url, usdc_mint: simnet.mint, network: 'simnet (presents as devnet)', state_file: join(dataDir, 'simnet', 'state.bin') })}\n`);
  await signalled;
  await simnet.stop();
  return 0;
}
