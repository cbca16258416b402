/**
 * Simnet's money source: a fee payer holding a large SOL balance and the USDC mint's
 * authority. Airdrops and USDC mints are real signed transactions through the same
 * `Chain.submit` path as everyone else's, so they have signatures, ledger entries and
 * token-balance metadata that a deposit watcher can find.
 */
import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getTransactionEncoder,
  lamports,
  none,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  some,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction, SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getMintEncoder,
  getMintToCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { DEVNET_USDC, USDC_DECIMALS } from '../solana/networks.ts';
import type { Chain } from './chain.ts';
import { MEMO_PROGRAM_ADDRESS } from './instructions.ts';
import { decodeWire } from './wire.ts';

/** SOL the faucet's payer starts with: 1,000,000 SOL. */
const PAYER_LAMPORTS = 1_000_000_000_000_000n;
const MINT_SIZE = 82n;

/** The faucet's two 32-byte Ed25519 private keys, persisted with the chain state. */
export interface FaucetKeys {
  payer: Uint8Array;
  mintAuthority: Uint8Array;
}

/** Simnet's fee payer and USDC mint authority. */
export class Faucet {
  private nonce = 0;

  private constructor(
    readonly keys: FaucetKeys,
    readonly payer: KeyPairSigner,
    readonly mintAuthority: KeyPairSigner,
  ) {}

  /** Loads the faucet from persisted keys, or generates new ones for a fresh chain. */
  static async load(keys?: FaucetKeys): Promise<Faucet> {
    const k = keys ?? { payer: crypto.getRandomValues(new Uint8Array(32)), mintAuthority: crypto.getRandomValues(new Uint8Array(32)) };
    return new Faucet(k, await createKeyPairSignerFromPrivateKeyBytes(k.payer), await createKeyPairSignerFromPrivateKeyBytes(k.mintAuthority));
  }

  /** Genesis of a fresh chain: funds the payer and writes the USDC mint (6 decimals, this authority, no freeze authority). */
  genesis(chain: Chain): void {
    chain.setAccount({
      address: this.payer.address,
      lamports: lamports(PAYER_LAMPORTS),
      programAddress: SYSTEM_PROGRAM_ADDRESS,
      executable: false,
      data: new Uint8Array(0),
      space: 0n,
    });
    chain.setAccount({
      address: DEVNET_USDC,
      lamports: lamports(chain.minimumBalanceForRentExemption(MINT_SIZE)),
      programAddress: TOKEN_PROGRAM_ADDRESS,
      executable: false,
      data: new Uint8Array(
        getMintEncoder().encode({ mintAuthority: some(this.mintAuthority.address), supply: 0n, decimals: USDC_DECIMALS, isInitialized: true, freezeAuthority: none() }),
      ),
      space: MINT_SIZE,
    });
  }

  /** Sends `amount` lamports from the payer to `to`; resolves to the landed signature. */
  airdrop(chain: Chain, to: Address, amount: bigint): Promise<string> {
    return this.send(chain, [getTransferSolInstruction({ source: this.payer, destination: to, amount })]);
  }

  /** Creates `owner`'s USDC token account if missing and mints `amount` base units into it. */
  async mintUsdc(chain: Chain, owner: Address, amount: bigint): Promise<string> {
    const [ata] = await findAssociatedTokenPda({ owner, mint: DEVNET_USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    return this.send(chain, [
      getCreateAssociatedTokenIdempotentInstruction({ payer: this.payer, ata, owner, mint: DEVNET_USDC }),
      getMintToCheckedInstruction({ mint: DEVNET_USDC, token: ata, mintAuthority: this.mintAuthority, amount, decimals: USDC_DECIMALS }),
    ]);
  }

  /**
   * What `agent-wallet admin faucet` and tests use: optional lamports first, then the USDC
   * mint (with idempotent token account creation). Resolves to the mint's signature.
   */
  async fund(chain: Chain, owner: Address, usdc: bigint, sol?: bigint): Promise<string> {
    if (sol !== undefined && sol > 0n) await this.airdrop(chain, owner, sol);
    return this.mintUsdc(chain, owner, usdc);
  }

  /**
   * Signs and submits with preflight. A memo with a counter makes every faucet transaction
   * unique: two identical requests within one blockhash would otherwise share a signature
   * and the second would be refused as already processed.
   */
  private async send(chain: Chain, instructions: Instruction[]): Promise<string> {
    const memo: Instruction = { programAddress: MEMO_PROGRAM_ADDRESS, data: new TextEncoder().encode(`simnet faucet ${Date.now()}.${++this.nonce}`) };
    const { blockhash, lastValidBlockHeight } = chain.latestBlockhash();
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(this.payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as Blockhash, lastValidBlockHeight }, m),
      (m) => appendTransactionMessageInstructions([...instructions, memo], m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    const result = chain.submit(decodeWire(new Uint8Array(getTransactionEncoder().encode(signed))), { skipPreflight: false });
    if (result.status === 'landed' && result.entry.err === null) return result.signature;
    const why =
      result.status === 'landed' ? JSON.stringify(result.entry.err)
      : result.status === 'dropped' ? result.reason
      : result.kind === 'signature' ? 'signature verification failed'
      : (result.outcome.errText ?? 'simulation failed');
    throw new Error(`simnet faucet transaction failed: ${why}`);
  }
}
