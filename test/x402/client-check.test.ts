/**
 * The agent refuses to sign an x402 message that is not exactly what x402_prepare described
 * (DESIGN §4 "the client verifies too"): every difference throws CustodyCheckError.
 */
import { describe, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { checkX402Message, type Prepared } from '../../src/client/x402.ts';
import type { ProfileData } from '../../src/client/profile.ts';
import { CustodyCheckError } from '../../src/client/register.ts';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { buildUsdcTransfer, buildX402Transfer } from '../../src/solana/transfer.ts';

const addr = async () => (await generateKeyPairSigner()).address;
const [wallet, payTo, feePayer, stranger] = await Promise.all([addr(), addr(), addr(), addr()]);
const profile = { address: wallet, network: 'simnet' } as unknown as ProfileData;
const blockhash = { blockhash: '3UY9LH9KcRXfXFSXZ3P6aoak2NeXtYrQQnuN79pGNiSw', lastValidBlockHeight: 200n };
const prepared: Prepared = { payment_required: true, fetch_id: 'x402_x', status: 'pre_approved', pay_to: payTo, amount_atomic: '10000', asset: DEVNET_USDC, fee_payer: feePayer, memo: null };

const x402 = async (over: Partial<Parameters<typeof buildX402Transfer>[0]> = {}) =>
  Buffer.from((await buildX402Transfer({ wallet, mint: DEVNET_USDC, payTo, amount: 10_000n, feePayer, memo: 'nonce', blockhash, ...over })).messageBytes).toString('base64');

describe('checkX402Message', () => {
  test('accepts exactly the prepared purchase', async () => {
    await checkX402Message(profile, prepared, await x402());
    await checkX402Message(profile, { ...prepared, memo: 'order-42' }, await x402({ memo: 'order-42' }));
  });

  test.each([
    ['another amount', { amount: 10_001n }, 'amount'],
    ['another recipient', { payTo: stranger }, 'the amount goes to'],
    ['another fee payer', { feePayer: stranger }, 'fee payer'],
    ['another mint', { mint: 'So11111111111111111111111111111111111111112' as Address }, 'mint'],
  ])('refuses %s', async (_name, over, reason) => {
    const err = await checkX402Message(profile, prepared, await x402(over as never)).catch((e) => e);
    expect(err).toBeInstanceOf(CustodyCheckError);
    expect(String(err.message)).toContain(reason);
  });

  test('refuses a message without the memo the seller asked for', async () => {
    await expect(checkX402Message(profile, { ...prepared, memo: 'order-42' }, await x402({ memo: 'other' }))).rejects.toBeInstanceOf(CustodyCheckError);
  });

  test('refuses a wallet-to-wallet layout (ATA creation, fee transfer) in place of the x402 one', async () => {
    const other = await buildUsdcTransfer({ wallet, mint: DEVNET_USDC, recipientOwner: payTo, amount: 10_000n, fee: 100n, treasuryOwner: stranger, feePayer, createRecipientAta: true, blockhash });
    await expect(checkX402Message(profile, prepared, Buffer.from(other.messageBytes).toString('base64'))).rejects.toBeInstanceOf(CustodyCheckError);
  });

  test('refuses a purchase in another asset than the USDC mint of its network', async () => {
    await expect(checkX402Message(profile, { ...prepared, asset: 'So11111111111111111111111111111111111111112' }, await x402())).rejects.toThrow('USDC');
  });
});
