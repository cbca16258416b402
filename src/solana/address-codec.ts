/**
 * Addresses to bytes and back, memoised. Kit's address codec goes through base58 with BigInt
 * arithmetic on every call, and the same few addresses (programs, the mint, the fee payer, the
 * wallets and their token accounts) recur in every message the daemon builds, signs and checks.
 * Kit still does the conversion and the validation the first time; both maps are bounded, least
 * recently used dropped first.
 */
import { getAddressDecoder, getAddressEncoder, type Address } from '@solana/kit';
import { Lru } from '../domain/lru.ts';

const bytesByAddress = new Lru<string, Uint8Array>(4096);
const addressByBytes = new Lru<string, Address>(4096);

/** The 32 bytes of `address`, shared with the cache: read them, never write them. Throws for anything that is not a base58 address. */
export function addressBytesView(address: string): Uint8Array {
  let bytes = bytesByAddress.get(address);
  if (bytes === undefined) {
    bytes = new Uint8Array(getAddressEncoder().encode(address as Address));
    bytesByAddress.set(address, bytes);
  }
  return bytes;
}

/** The 32 bytes of `address`, a copy the caller may keep or change. */
export function addressBytes(address: string): Uint8Array {
  return addressBytesView(address).slice();
}

/** The base58 address of 32 bytes. */
export function addressOf(bytes: Uint8Array): Address {
  if (bytes.length !== 32) return getAddressDecoder().decode(bytes);
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, 32).toString('latin1');
  let address = addressByBytes.get(key);
  if (address === undefined) {
    address = getAddressDecoder().decode(bytes);
    addressByBytes.set(key, address);
  }
  return address;
}
