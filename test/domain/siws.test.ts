/** Sign-In With Solana texts and the rules under which our wallet signs one (src/domain/siws.ts). */
import { describe, expect, test } from 'bun:test';
import { formatSIWSMessage } from '@x402/extensions/sign-in-with-x';
import { appendTransactionMessageInstructions, compileTransaction, createTransactionMessage, pipe, setTransactionMessageFeePayer, setTransactionMessageLifetimeUsingBlockhash, type Address } from '@solana/kit';
import { decodesAsSolana, parseSiwsMessage, siwsMessage, siwsProblem, type SiwsFields } from '../../src/domain/siws.ts';

const NOW = new Date('2026-11-25T12:00:00Z');
const ADDRESS = '8seeb8A3SN9ufAoX3L1bjszE2qDPXBFxcZBMU44tbaBm';
const CHAIN = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const URL_ = 'https://api.example.com/article?id=7';
const fields = (over: Partial<SiwsFields> = {}): SiwsFields => ({
  domain: 'api.example.com',
  address: ADDRESS,
  statement: 'Sign in to read what you bought',
  uri: 'https://api.example.com/article',
  version: '1',
  chainId: CHAIN,
  nonce: 'a1b2c3d4e5f60718',
  issuedAt: '2026-11-25T11:59:00Z',
  expirationTime: '2026-11-25T12:04:00Z',
  resources: ['https://api.example.com/article'],
  ...over,
});
const expectation = { url: URL_, address: ADDRESS, chainId: CHAIN, now: NOW };

describe('SIWS', () => {
  test('the text is the one the official x402 packages sign and verify, and reads back to its fields', () => {
    const f = fields({ notBefore: '2026-11-25T11:58:00Z', requestId: 'r-1' });
    expect(siwsMessage(f)).toBe(formatSIWSMessage(f as never, ADDRESS));
    expect(parseSiwsMessage(siwsMessage(f))).toEqual(f);
    expect(parseSiwsMessage(siwsMessage(fields({ statement: undefined })))).toEqual(fields({ statement: undefined }));
    expect(parseSiwsMessage('not a sign-in')).toBeNull();
    expect(parseSiwsMessage(`${siwsMessage(fields())}\nExtra: line`)).toBeNull();
  });

  test('a sign-in for the host fetched, this wallet and chain, fresh and short-lived, may be signed', () => {
    expect(siwsProblem(fields(), expectation)).toBeNull();
  });

  test.each([
    ['another host', { domain: 'evil.example' }, 'is for evil.example'],
    ['another port of the host', { domain: 'api.example.com:8443' }, 'is for api.example.com:8443'],
    ['a URI elsewhere', { uri: 'https://evil.example/article' }, 'is not on https://api.example.com'],
    ['a resource elsewhere', { resources: ['https://evil.example/x'] }, 'resource https://evil.example/x'],
    ['another wallet', { address: 'EQwr17EkSUGHrLBesKDtfpGjZA6sWR1K24VxhLFDaaSx' }, 'not this wallet'],
    ['another chain', { chainId: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }, 'for chain solana:5eykt'],
    ['a short nonce', { nonce: 'abc' }, 'nonce'],
    ['a line break in the statement', { statement: 'hi\nURI: https://evil.example' }, 'line break'],
    ['issued long ago', { issuedAt: '2026-11-25T11:50:00Z' }, 'outside the last 5 minutes'],
    ['no expiry', { expirationTime: undefined }, 'never expires'],
    ['expired', { issuedAt: '2026-11-25T11:58:00Z', expirationTime: '2026-11-25T11:59:59Z' }, 'expired at'],
    ['valid for an hour', { expirationTime: '2026-11-25T13:00:00Z' }, 'more than 10 minutes'],
    ['not valid yet', { notBefore: '2026-11-25T13:00:00Z' }, 'valid only from'],
  ])('%s is refused, naming why', (_name, over, reason) => {
    expect(siwsProblem(fields(over as Partial<SiwsFields>), expectation)).toContain(reason);
  });

  test('a Solana transaction message decodes as one; a sign-in text does not', () => {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(ADDRESS as Address, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: '11111111111111111111111111111111' as never, lastValidBlockHeight: 1n }, m),
      (m) => appendTransactionMessageInstructions([], m),
    );
    expect(decodesAsSolana(new Uint8Array(compileTransaction(message).messageBytes))).toBe(true);
    expect(decodesAsSolana(new TextEncoder().encode(siwsMessage(fields())))).toBe(false);
  });
});
