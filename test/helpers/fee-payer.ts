/** The operator's fee payer out of SOL, as a provider outage of funds would leave it: for tests of what fails then. */
import { AccountRole, generateKeyPairSigner, type Instruction } from '@solana/kit';
import { ed25519Sign } from '../../src/frost/native-ed25519.ts';
import { computeUnitLimitInstruction, computeUnitPriceInstruction, SYSTEM_PROGRAM_ADDRESS } from '../../src/solana/instructions.ts';
import { assembleSignedTransaction, compileMessage } from '../../src/solana/transfer.ts';
import type { World } from './world.ts';

/** Moves all of the fee payer's SOL but `keep` lamports away, in a transaction priced at `price` (above a congestion floor). */
export async function drainFeePayer(world: World, keep: bigint, price = 1n): Promise<void> {
  const payer = world.services.feePayer;
  const to = (await generateKeyPairSigner()).address;
  const units = 1_000;
  const fee = 5_000n + (price * BigInt(units) + 999_999n) / 1_000_000n;
  const moved = (await world.services.chain.getSolBalance(payer.address)) - fee - keep;
  const data = new Uint8Array(12);
  new DataView(data.buffer).setUint32(0, 2, true); // System program Transfer
  new DataView(data.buffer).setBigUint64(4, moved, true);
  const transfer: Instruction = {
    programAddress: SYSTEM_PROGRAM_ADDRESS,
    accounts: [
      { address: payer.address, role: AccountRole.WRITABLE_SIGNER },
      { address: to, role: AccountRole.WRITABLE },
    ],
    data,
  };
  const blockhash = await world.services.chain.getLatestBlockhash();
  const message = compileMessage(payer.address, blockhash, [computeUnitLimitInstruction(units), computeUnitPriceInstruction(price), transfer]);
  const wire = assembleSignedTransaction(message, { [payer.address]: ed25519Sign(message, payer.keypairBytes) });
  await world.services.chain.sendRawTransaction(wire);
  const deadline = Date.now() + 10_000;
  while ((await world.services.chain.getSolBalance(payer.address)) !== keep) {
    if (Date.now() > deadline) throw new Error('the drain did not land');
    await Bun.sleep(20);
  }
}
