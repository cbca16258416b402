/** Builders shared by the Solana tests: random addresses and hand-compiled (tampered) messages. */
import { AccountRole, getAddressDecoder, type Address, type Instruction } from '@solana/kit';
import { DEVNET_USDC } from '../../src/solana/networks.ts';
import { compileMessage } from '../../src/solana/transfer.ts';

/** A fresh random address (not necessarily on the curve; fine for layout tests). */
export function randomAddress(): Address {
  return getAddressDecoder().decode(crypto.getRandomValues(new Uint8Array(32)));
}

export const BLOCKHASH = { blockhash: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG', lastValidBlockHeight: 1_000n };

/** The cast of one payment: wallet, recipient, treasury, operator fee payer, USDC mint. */
export function cast() {
  return {
    wallet: randomAddress(),
    recipientOwner: randomAddress(),
    treasuryOwner: randomAddress(),
    feePayer: randomAddress(),
    mint: DEVNET_USDC,
  };
}

/** Compiles any instruction list under `feePayer`, bypassing the builders' own refusals. */
export function compileWith(feePayer: Address, instructions: Instruction[]): Uint8Array {
  return compileMessage(feePayer, BLOCKHASH, instructions);
}

/** System Program transfer of lamports from `source` (a signer) to `destination`. */
export function systemTransfer(source: Address, destination: Address, lamports: bigint): Instruction {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, lamports, true);
  return {
    programAddress: '11111111111111111111111111111111' as Address,
    accounts: [
      { address: source, role: AccountRole.WRITABLE_SIGNER },
      { address: destination, role: AccountRole.WRITABLE },
    ],
    data,
  };
}
