import { describe, expect, test } from 'bun:test';
import { authenticate, credentialOf } from '../../src/api/auth.ts';
import { AppError } from '../../src/errors.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { testServices } from '../helpers/services.ts';

const { db } = testServices();
const bot = newApiKey('bot');
const merchant = newApiKey('merchant');
await db.run("INSERT INTO usernames VALUES ('alice-1', 'wallet', 'wal_a'), ('shop', 'merchant', 'mer_a')");
await db.run("INSERT INTO wallets (wallet_id, username, name, address, api_key_hash, status, claim_code_hash, claim_code_sealed, server_key, public_package, created_at) VALUES ('wal_a', 'alice-1', 'Alice', 'addr', ?, 'unclaimed', x'00', x'00', x'00', '{}', 1)", bot.hash);
await db.run("INSERT INTO merchants (merchant_id, username, name, payout_address, api_key_hash, created_at) VALUES ('mer_a', 'shop', 'Shop', 'addr2', ?, 1)", merchant.hash);

async function unauthorized(headers: Record<string, string>, kind: 'bot' | 'merchant'): Promise<AppError> {
  try {
    await authenticate(db, credentialOf(new Headers(headers)), kind);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected UNAUTHORIZED');
}

describe('authenticate', () => {
  test('a valid bot key identifies its wallet and its claim condition', async () => {
    expect(await authenticate(db, credentialOf(new Headers({ authorization: `Bearer ${bot.key}` })), 'bot')).toEqual({ kind: 'bot', walletId: 'wal_a', claimed: false });
  });

  test('a valid merchant key identifies its merchant', async () => {
    expect(await authenticate(db, credentialOf(new Headers({ authorization: `Bearer ${merchant.key}` })), 'merchant')).toEqual({ kind: 'merchant', merchantId: 'mer_a' });
  });

  test.each([
    ['no header', {}],
    ['empty bearer', { authorization: 'Bearer ' }],
    ['basic auth', { authorization: `Basic ${btoa('a:b')}` }],
    ['unknown key', { authorization: `Bearer ${newApiKey('bot').key}` }],
    ['merchant key on bot', { authorization: `Bearer ${merchant.key}` }],
    ['truncated key', { authorization: `Bearer ${bot.key.slice(0, -3)}` }],
  ])('%s → 401 telling the caller to send a bearer wallet_bot_ key', async (_name, headers) => {
    const err = await unauthorized(headers, 'bot');
    expect(err.errorCode).toBe('UNAUTHORIZED');
    expect(err.status).toBe(401);
    expect(err.howToFix).toContain('Authorization: Bearer wallet_bot_');
  });

  test('a bot key on a merchant action → 401 naming the merchant prefix', async () => {
    const err = await unauthorized({ authorization: `Bearer ${bot.key}` }, 'merchant');
    expect(err.howToFix).toContain('wallet_merchant_');
  });

  test('only the SHA-256 of a key is stored', async () => {
    const stored = (await db.get('SELECT api_key_hash FROM wallets')) as { api_key_hash: Uint8Array };
    expect(stored.api_key_hash.length).toBe(32);
    expect(Buffer.from(stored.api_key_hash).toString()).not.toContain(bot.key.slice(11, 20));
  });
});
