import { expect, it } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { LiteSVM } from 'litesvm';
import { Chain } from '../../src/simnet/chain.ts';
import { Faucet } from '../../src/simnet/faucet.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { usdcAta } from './helpers.ts';

it('reads every kind of account exactly as LiteSVM’s own wrapper does (the native reader under it is pinned)', async () => {
  const chain = Chain.create(Date.now());
  const faucet = await Faucet.load();
  faucet.genesis(chain);
  const owner = await generateKeyPairSigner();
  await faucet.fund(chain, owner.address, 2_500_000n, 1_000_000_000n);
  const missing = (await generateKeyPairSigner()).address;
  const svm = (chain as unknown as { svm: LiteSVM }).svm;
  const addresses: Address[] = [owner.address, await usdcAta(owner.address), DEVNET_USDC, TOKEN_PROGRAM_ADDRESS, faucet.payer.address, missing];
  for (const address of addresses) {
    const wrapped = svm.getAccount(address);
    const ours = chain.account(address);
    if (!wrapped.exists) {
      expect(ours).toBeNull();
      continue;
    }
    const { exists: _, ...account } = wrapped;
    expect(ours).toEqual(account);
  }
  // The token program is executable and large: the case whose data copy the payment path skips.
  expect(chain.account(TOKEN_PROGRAM_ADDRESS)?.executable).toBe(true);
  expect(chain.account(missing)).toBeNull();
});
