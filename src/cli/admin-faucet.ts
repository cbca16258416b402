/**
 * `agent-wallet admin faucet ADDRESS AMOUNT [--sol N] [--data-dir DIR] [--json]`: USDC (and SOL)
 * from the running daemon's simnet, found through `<data-dir>/daemon.json`. Simnet only.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseUsdc } from '../domain/money.ts';
import { isSolanaAddress } from '../payments/recipient.ts';
import { commandFlags, type CommandInput } from './context.ts';
import { UsageError } from './usage.ts';
import { simnetFaucet } from '../simnet/faucet-client.ts';

const LAMPORTS_PER_SOL = 1_000_000_000n;

/** Thrown for a faucet that cannot be reached or refuses; the message says what to do. */
export class FaucetError extends Error {
  override readonly name = 'FaucetError';
}

export async function faucetCommand(input: CommandInput, io: { out: (t: string) => void; env: Record<string, string | undefined> }): Promise<number> {
  const { flags, positional } = commandFlags(input, { 'data-dir': 'string', json: 'boolean', sol: 'string' });
  const [address, amount] = positional as [string, string];
  if (!isSolanaAddress(address)) throw new UsageError(`${address} is not a Solana address`);
  const usdc = parseUsdc(amount);
  if (!usdc.ok) throw new UsageError(`AMOUNT ${usdc.reason}`);
  const sol = flags.sol === undefined ? { ok: true as const, micro: 0n } : parseUsdc(flags.sol);
  if (!sol.ok) throw new UsageError(`--sol ${sol.reason}`);
  const dataDir = resolve(flags['data-dir'] ?? io.env.AGENT_WALLET_DATA_DIR ?? './data');
  const stateFile = join(dataDir, 'daemon.json');
  if (!existsSync(stateFile)) throw new FaucetError(`no running daemon found (${stateFile} is missing); start it with "agent-wallet serve --data-dir ${dataDir}"`);
  const daemon = JSON.parse(readFileSync(stateFile, 'utf8')) as { rpc_url?: string; network?: string };
  if (daemon.network !== 'simnet' || !daemon.rpc_url) throw new FaucetError(`the daemon runs on ${daemon.network}; the faucet exists on simnet only`);
  // SOL has 9 decimals; --sol takes up to 6, so micro-SOL × 1000 = lamports.
  const lamports = (sol.micro * LAMPORTS_PER_SOL) / 1_000_000n;
  let signature: string;
  try {
    signature = await simnetFaucet(daemon.rpc_url, address, usdc.micro, lamports > 0n ? lamports : undefined);
  } catch (err) {
    const message = (err as Error).message;
    throw new FaucetError(message.startsWith('simnet faucet refused') ? `the faucet refused: ${message.slice('simnet faucet refused: '.length)}` : `cannot reach simnet at ${daemon.rpc_url}: ${message}; is the daemon running?`);
  }
  const data = { address, usdc: Number(amount), sol: flags.sol === undefined ? 0 : Number(flags.sol), signature };
  io.out(flags.json ? `${JSON.stringify(data, null, 2)}\n` : `Sent ${amount} USDC${lamports > 0n ? ` and ${flags.sol} SOL` : ''} to ${address} (${signature}).\n`);
  return 0;
}
