/**
 * `agent-wallet recover --kit FILE --to ADDRESS --rpc URL --fee-payer KEYPAIR [--profile P]`:
 * the owner and the agent sweep the whole USDC balance with no daemon (the operator is gone).
 * Talks to the Solana RPC only; the kit passphrase comes from AGENT_WALLET_KIT_PASSPHRASE or is typed.
 */
import type { Address } from '@solana/kit';
import { readKit } from '../client/recovery-kit.ts';
import { offlineSweep } from '../client/recovery-sweep.ts';
import { formatUsdc } from '../domain/money.ts';
import { readKeypairFile } from '../secret-files.ts';
import { NETWORKS, type NetworkName } from '../solana/networks.ts';
import { createRpcChainPort } from '../solana/port.ts';
import { commandFlags, type CliContext } from './context.ts';
import { EXIT, printData, progress } from './output.ts';
import { readSecret } from './secret-input.ts';
import { UsageError } from './usage.ts';

export async function recoverCommand(ctx: CliContext): Promise<number> {
  const { flags } = commandFlags(ctx, { kit: 'string', to: 'string', rpc: 'string', 'fee-payer': 'string', mint: 'string' });
  for (const f of ['kit', 'to', 'rpc', 'fee-payer'] as const) if (!flags[f]) throw new UsageError(`--${f} is required`);
  if (!/^https?:\/\//.test(flags.rpc!)) throw new UsageError(`--rpc must be an http(s) URL of a Solana RPC, got "${flags.rpc}"`);
  const profile = ctx.store.load(ctx.profileName);
  const mint = (flags.mint ?? NETWORKS[profile.network as NetworkName]?.defaultUsdcMint ?? null) as Address | null;
  if (!mint) throw new UsageError(`the profile's network (${profile.network}) has no known USDC mint: pass --mint`);
  const kit = readKit(flags.kit!);
  const feePayer = readKeypairFile(flags['fee-payer']!);
  const passphrase = await readSecret('AGENT_WALLET_KIT_PASSPHRASE', 'Kit passphrase: ');
  const done = await offlineSweep({ profile, kit, passphrase, to: flags.to!, mint, feePayer, chain: createRpcChainPort(flags.rpc!, { timeoutMs: 15_000 }), progress: (s) => progress(ctx, s) });
  printData(
    ctx,
    { signature: done.signature, wallet: done.wallet, to: done.to, amount: Number(formatUsdc(done.amount)), fee_payer: done.fee_payer },
    `Swept ${formatUsdc(done.amount)} USDC from ${done.wallet} to ${done.to} (transaction ${done.signature}).`,
  );
  return EXIT.ok;
}
