/**
 * Test helpers for simnet suites: polling with a deadline (never fixed sleeps), raw JSON-RPC
 * calls for what kit's typed client cannot express, and a USDC transfer built, signed and
 * encoded with kit's own transaction pipeline — the way any third-party client would.
 */
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { DEVNET_USDC, USDC_DECIMALS } from '../../src/solana/networks.ts';
import { COMPUTE_BUDGET_PROGRAM } from '../../src/simnet/fees.ts';

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function until<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** One raw JSON-RPC call; returns the parsed response envelope and the HTTP status. */
export async function rawRpc(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}

/** The USDC associated token account of `owner`. */
export async function usdcAta(owner: Address): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint: DEVNET_USDC, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return ata;
}

/** Compute Budget SetComputeUnitPrice: `microLamports` per compute unit. */
export function setComputeUnitPrice(microLamports: bigint): Instruction {
  const data = new Uint8Array(9);
  data[0] = 3;
  new DataView(data.buffer).setBigUint64(1, microLamports, true);
  return { programAddress: COMPUTE_BUDGET_PROGRAM as Address, data };
}

/**
 * A signed v0 transaction: create `to`'s USDC account if needed, then transferChecked `amount`
 * from `from`; with `priceMicroLamports`, a SetComputeUnitPrice first.
 */
export async function signedUsdcTransfer(
  from: KeyPairSigner,
  to: Address,
  amount: bigint,
  lifetime: { blockhash: string; lastValidBlockHeight: bigint },
  priceMicroLamports?: bigint,
): Promise<{ wire: string; signature: string }> {
  const source = await usdcAta(from.address);
  const destination = await usdcAta(to);
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(from, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: lifetime.blockhash as Blockhash, lastValidBlockHeight: lifetime.lastValidBlockHeight }, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          ...(priceMicroLamports === undefined ? [] : [setComputeUnitPrice(priceMicroLamports)]),
          getCreateAssociatedTokenIdempotentInstruction({ payer: from, ata: destination, owner: to, mint: DEVNET_USDC }),
          getTransferCheckedInstruction({ source, mint: DEVNET_USDC, destination, authority: from, amount, decimals: USDC_DECIMALS }),
        ],
        m,
      ),
  );
  const tx = await signTransactionMessageWithSigners(message);
  return { wire: getBase64EncodedWireTransaction(tx), signature: getSignatureFromTransaction(tx) };
}
