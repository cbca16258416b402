/**
 * Persistence of a simnet: one file holding simnet's own bookkeeping as JSON (block height,
 * blockhash window, ledger, faucet keys) followed by LiteSVM's `toBytes()` snapshot. It is
 * written to a temporary file, flushed and renamed over the old one, so a crash mid-save
 * leaves the previous state intact. A file that exists but cannot be read is an error, never
 * a silent fresh start (that would wipe every balance).
 */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { getBase64Decoder, getBase64Encoder } from '@solana/kit';
import type { ChainSnapshot } from './chain.ts';
import type { FaucetKeys } from './faucet.ts';
import type { LedgerEntry } from './ledger.ts';

const MAGIC = new TextEncoder().encode('AWSIMNT1');

/** Everything a simnet needs to resume: the chain, the faucet keys, and when it was saved. */
export interface SimnetState {
  chain: ChainSnapshot;
  faucet: FaucetKeys;
  savedAtMs: number;
}

interface StateJson {
  height: string;
  savedAtMs: number;
  blockhashes: [string, string][];
  ledger: readonly LedgerEntry[];
  payerKey: string;
  mintAuthorityKey: string;
}

/** Writes `state` to `path` atomically (temp file, fsync, rename), creating its directory (0700) if needed. */
export async function saveState(path: string, state: SimnetState): Promise<void> {
  const b64 = getBase64Decoder();
  const json: StateJson = {
    height: state.chain.height.toString(),
    savedAtMs: state.savedAtMs,
    blockhashes: state.chain.blockhashes.map(([hash, height]) => [hash, height.toString()]),
    ledger: state.chain.ledger,
    payerKey: b64.decode(state.faucet.payer),
    mintAuthorityKey: b64.decode(state.faucet.mintAuthority),
  };
  const head = new TextEncoder().encode(JSON.stringify(json));
  const out = new Uint8Array(MAGIC.length + 4 + head.length + state.chain.svm.length);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint32(MAGIC.length, head.length, true);
  out.set(head, MAGIC.length + 4);
  out.set(state.chain.svm, MAGIC.length + 4 + head.length);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}`;
  const file = await open(tmp, 'w', 0o600);
  try {
    await file.writeFile(out);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
}

/** Reads a state file; null when none exists. Throws when the file is not a simnet state. */
export async function loadState(path: string): Promise<SimnetState | null> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const headStart = MAGIC.length + 4;
  if (bytes.length < headStart || !MAGIC.every((b, i) => bytes[i] === b)) throw new Error(`${path} is not a simnet state file`);
  const headLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(MAGIC.length, true);
  if (bytes.length < headStart + headLength) throw new Error(`${path} is truncated`);
  const json = JSON.parse(new TextDecoder().decode(bytes.subarray(headStart, headStart + headLength))) as StateJson;
  const b64 = getBase64Encoder();
  return {
    chain: {
      svm: bytes.subarray(headStart + headLength),
      height: BigInt(json.height),
      blockhashes: json.blockhashes.map(([hash, height]) => [hash, BigInt(height)]),
      ledger: json.ledger,
    },
    faucet: { payer: new Uint8Array(b64.encode(json.payerKey)), mintAuthority: new Uint8Array(b64.encode(json.mintAuthorityKey)) },
    savedAtMs: json.savedAtMs,
  };
}
