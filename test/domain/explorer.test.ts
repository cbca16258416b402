import { expect, test } from 'bun:test';
import { explorerTxUrl } from '../../src/domain/explorer.ts';

test('mainnet and devnet transactions link to the public explorer (devnet with its cluster); simnet and custom link nowhere', () => {
  expect(explorerTxUrl('mainnet', 'SIG')).toBe('https://explorer.solana.com/tx/SIG');
  expect(explorerTxUrl('devnet', 'SIG')).toBe('https://explorer.solana.com/tx/SIG?cluster=devnet');
  expect(explorerTxUrl('simnet', 'SIG')).toBeNull();
  expect(explorerTxUrl('custom', 'SIG')).toBeNull();
});
