/**
 * Reads the ChainPort does not offer, for the operator's kit only: the wire bytes and memo of a
 * landed transaction (the reconciliation after a restore: our payments carry their transaction id
 * in the memo, and the wire bytes let the ordinary confirmation path record them), the cluster's
 * genesis hash and its clock (`admin doctor`). Candidates to move into the port.
 */
import { address, createSolanaRpc, getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder, type Signature } from '@solana/kit';
import { ChainUnavailableError } from './errors.ts';
import { MEMO_PROGRAM_ADDRESS } from './instructions.ts';

export interface LandedWire {
  wire: Uint8Array;
  /** The text of the first Memo instruction, or null. */
  memo: string | null;
}

export type LandedWireReader = (signature: string) => Promise<LandedWire | null>;

export function createLandedWireReader(rpcUrl: string, timeoutMs = 10_000): LandedWireReader {
  const rpc = createSolanaRpc(rpcUrl);
  return async (signature) => {
    let tx;
    try {
      tx = await rpc
        .getTransaction(signature as Signature, { encoding: 'base64', maxSupportedTransactionVersion: 0, commitment: 'confirmed' })
        .send({ abortSignal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw new ChainUnavailableError(`getTransaction failed: ${(err as Error).message}`, { cause: err });
    }
    if (tx === null) return null;
    const wire = new Uint8Array(getBase64Encoder().encode(tx.transaction[0]));
    const { messageBytes } = getTransactionDecoder().decode(wire);
    const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
    let memo: string | null = null;
    // Our transfers are version 0 or legacy; a newer message format carries no memo we wrote.
    if (message.version !== 0 && message.version !== 'legacy') return { wire, memo };
    for (const ix of message.instructions) {
      if (message.staticAccounts[ix.programAddressIndex] === MEMO_PROGRAM_ADDRESS && ix.data) {
        memo = new TextDecoder().decode(ix.data);
        break;
      }
    }
    return { wire, memo };
  };
}

/** The cluster's genesis hash. */
export async function getGenesisHash(rpcUrl: string, timeoutMs = 10_000): Promise<string> {
  try {
    return await createSolanaRpc(rpcUrl).getGenesisHash().send({ abortSignal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new ChainUnavailableError(`getGenesisHash failed: ${(err as Error).message}`, { cause: err });
  }
}

const CLOCK_SYSVAR = address('SysvarC1ock11111111111111111111111111111111');
/** Where the Clock sysvar keeps unix_timestamp (i64 LE): after slot, epoch_start_timestamp, epoch and leader_schedule_epoch. */
const UNIX_TIMESTAMP_OFFSET = 32;

/** The chain's wall clock (Clock sysvar unix_timestamp), in seconds. */
export async function getChainUnixTime(rpcUrl: string, timeoutMs = 10_000): Promise<bigint> {
  let info;
  try {
    info = await createSolanaRpc(rpcUrl).getAccountInfo(CLOCK_SYSVAR, { encoding: 'base64', commitment: 'confirmed' }).send({ abortSignal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new ChainUnavailableError(`getAccountInfo(Clock) failed: ${(err as Error).message}`, { cause: err });
  }
  const data = info.value === null ? null : getBase64Encoder().encode(info.value.data[0]);
  if (data === null || data.length < UNIX_TIMESTAMP_OFFSET + 8) throw new ChainUnavailableError('the RPC did not return the Clock sysvar');
  return new DataView(data.buffer, data.byteOffset).getBigInt64(UNIX_TIMESTAMP_OFFSET, true);
}
