/** A hand-built x402 `exact` SVM payment as the facilitator's verify and settle take it, for tests that vary its compute budget or blockhash. */
import {
  appendTransactionMessageInstructions,
  compileTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { usdcAta } from '../../src/solana/ata.ts';
import { computeUnitLimitInstruction, computeUnitPriceInstruction, memoInstruction, transferCheckedInstruction } from '../../src/solana/instructions.ts';
import { DEVNET_CAIP2, USDC } from '../x402/sellers.ts';
import type { World } from './world.ts';

/**
 * The v2 body `{x402Version, paymentPayload, paymentRequirements}` of a payment of `amount` from
 * `payer` to `payTo`, signed by the payer, the daemon's fee payer left to sign; under the chain's
 * latest blockhash unless `blockhash`, with the reference client's budget (20,000 CU at 1 µlamport) unless given.
 */
export async function exactPayment(world: World, p: { payer: KeyPairSigner; payTo: Address; amount: bigint; memo: string; units?: number; microLamports?: bigint; blockhash?: string }) {
  const latest = await world.services.chain.getLatestBlockhash();
  const feePayer = world.services.feePayer.address;
  const [source, destination] = await Promise.all([usdcAta(p.payer.address, USDC as Address), usdcAta(p.payTo, USDC as Address)]);
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: (p.blockhash ?? latest.blockhash) as never, lastValidBlockHeight: latest.lastValidBlockHeight }, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          computeUnitLimitInstruction(p.units ?? 20_000),
          computeUnitPriceInstruction(p.microLamports ?? 1n),
          transferCheckedInstruction({ source, mint: USDC as Address, destination, authority: p.payer.address, amount: p.amount, decimals: 6 }),
          memoInstruction(p.memo),
        ],
        m,
      ),
  );
  const tx = await partiallySignTransaction([p.payer.keyPair], compileTransaction(message));
  const requirements = { scheme: 'exact', network: DEVNET_CAIP2, amount: p.amount.toString(), asset: USDC, payTo: p.payTo, maxTimeoutSeconds: 60, extra: { feePayer } };
  return { x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload: { transaction: getBase64EncodedWireTransaction(tx as never) } }, paymentRequirements: requirements };
}
