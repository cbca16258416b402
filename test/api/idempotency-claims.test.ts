import { expect, test } from 'bun:test';
import { IdempotencyClaims } from '../../src/api/idempotency-claims.ts';
import type { Store } from '../../src/db/store.ts';

const scope = { principal: 'agent:1', action: 'pay', key: 'k1' };
const hash = new Uint8Array([1, 2, 3]);

test('a claim whose ledger read began while the holder ran is not granted after the holder committed and released', async () => {
  // The ledger's answer to the second read is held back: it was read before the holder committed.
  let answer: ((row: null) => void) | undefined;
  let reads = 0;
  const db = {
    get: () => (reads++ === 0 ? Promise.resolve(null) : new Promise<null>((r) => (answer = r))),
  } as unknown as Store;
  const claims = new IdempotencyClaims();
  expect(await claims.claim(db, scope, hash, 1000, 60_000)).toEqual({ state: 'new' });
  const second = claims.claim(db, scope, hash, 1000, 60_000);
  claims.release(scope); // the holder committed its answer and released
  answer?.(null);
  expect(await second).toEqual({ state: 'running' });
});

test('a key found done in the ledger leaves no claim behind', async () => {
  const row = { request_hash: hash, state: 'done', status: 200n, response: '{}', created_at: 1n };
  const db = { get: () => Promise.resolve(row) } as unknown as Store;
  const claims = new IdempotencyClaims();
  expect(await claims.claim(db, scope, hash, 1000, 60_000)).toEqual({ state: 'replay', status: 200, response: '{}' });
  expect(await claims.claim(db, scope, new Uint8Array([9]), 1000, 60_000)).toEqual({ state: 'conflict' });
  const empty = { get: () => Promise.resolve(null) } as unknown as Store;
  expect(await claims.claim(empty, scope, hash, 1000, 60_000)).toEqual({ state: 'new' });
});
