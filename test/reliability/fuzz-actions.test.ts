/**
 * Every action of every endpoint, with generated well-shaped and broken bodies: never a 5xx,
 * always a valid envelope, and never a state change when the answer is an error. Seeded; a
 * failure prints the seed (FUZZ_SEED=… reproduces it).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { TSchema } from '@sinclair/typebox';
import { actionTable } from '../../src/actions/index.ts';
import { createApp } from '../../src/api/app.ts';
import { ERROR_CODES } from '../../src/contract/errors.ts';
import { newId } from '../../src/contract/ids.ts';
import { ensureOwner, insertOwnerToken } from '../../src/db/owners.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { rng } from '../helpers/random.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let ownerToken: string;
let merchantKey: string;

beforeAll(async () => {
  world = await startWorld();
  alice = await world.agent('Alice', { claimBy: 'owner@example.com' });
  bob = await world.agent('Bob', { claimBy: 'owner@example.com' });
  await world.fund(alice.address, 50_000_000n);
  const key = newApiKey('owner');
  await world.services.db
    .transaction(async () => {
      const { owner } = await ensureOwner(world.services.db, 'owner@example.com', newId('owner'), Date.now());
      await insertOwnerToken(world.services.db, { token_id: newId('ownerToken'), owner_id: owner.owner_id, token_hash: key.hash, label: 'fuzz', now: Date.now() });
    });
  ownerToken = key.key;
  const merchant = newApiKey('merchant');
  await world.services.db.run("INSERT INTO usernames VALUES ('fuzz-shop', 'merchant', 'mer_fuzz')");
  await world.services.db.run("INSERT INTO merchants (merchant_id, username, name, payout_address, api_key_hash, created_at) VALUES ('mer_fuzz', 'fuzz-shop', 'Fuzz Shop', ?, ?, 1)", bob.address, merchant.hash);
  merchantKey = merchant.key;
});
afterAll(() => world.stop());

const HOSTILE: unknown[] = [
  -1, 0, 1e6, 0.0000001, '1,5', ' 1', '١', 2 ** 53 + 1, null, '-0', '1e3', 'NaN', Infinity === 1 ? 0 : 'Infinity',
  '\u202Eevil\u202C', 'a\u0000b', '💸'.repeat(40), 'x'.repeat(5000), '', ' ', true, false, [], {}, [1, 2], { nested: { deep: 1 } },
  '../../etc/passwd', 'http://127.0.0.1/', 'http://169.254.169.254/latest', 'javascript:alert(1)', '<script>x</script>',
  'wal_0000000000000000000000000', 'tx_0000000000000000000000000', '11111111111111111111111111111111', "'; DROP TABLE wallets; --",
];

/** A value for `schema`: usually plausible, often hostile. */
function value(schema: TSchema, r: () => number, depth = 0): unknown {
  if (r() < 0.45) return HOSTILE[Math.floor(r() * HOSTILE.length)];
  const s = schema as { type?: string; anyOf?: TSchema[]; const?: unknown; properties?: Record<string, TSchema>; items?: TSchema; pattern?: string; enum?: unknown[] };
  if (s.const !== undefined) return s.const;
  if (s.anyOf?.length) return value(s.anyOf[Math.floor(r() * s.anyOf.length)]!, r, depth);
  switch (s.type) {
    case 'string':
      return ['alice', 'x', alice.username, bob.username, bob.address, '12.5', 'order-1', 'owner@example.com', 'https://example.com/'][Math.floor(r() * 9)];
    case 'number':
    case 'integer':
      return [1, 5, 12.5, 100, 0.01][Math.floor(r() * 5)];
    case 'boolean':
      return r() < 0.5;
    case 'array':
      return depth > 2 ? [] : Array.from({ length: Math.floor(r() * 3) }, () => value(s.items ?? ({} as TSchema), r, depth + 1));
    case 'object':
      return depth > 2 ? {} : body(s as TSchema, r, depth + 1);
    default:
      return 'x';
  }
}

function body(schema: TSchema, r: () => number, depth = 0): Record<string, unknown> {
  const props = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(props)) if (r() < 0.8) out[k] = value(v, r, depth);
  if (r() < 0.15) out[['extra', '__proto__', 'constructor', 'wallet_id', 'action'][Math.floor(r() * 5)]!] = HOSTILE[Math.floor(r() * HOSTILE.length)];
  return out;
}

test('every action × 25 generated bodies: valid envelopes, no 5xx, no state change on errors', async () => {
  const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
  const r = rng(seed);
  const app = createApp(world.services);
  const table = actionTable();
  const changes = async () => Number(((await world.services.db.get('SELECT total_changes() AS n')) as { n: bigint }).n);
  const keys: Record<string, string | undefined> = { none: undefined, bot: alice.profile.api_key, merchant: merchantKey, owner: ownerToken };
  let calls = 0;
  for (const [endpoint, actions] of Object.entries(table)) {
    for (const [name, entry] of actions) {
      // Long polls would only slow the fuzz down; their parameters are still fuzzed below.
      for (let i = 0; i < 25; i++) {
        const params = body(entry.contract.params, r);
        if ('wait_seconds' in params) params.wait_seconds = 0;
        if (name === 'x402_prepare' || name === 'set_webhook' || name === 'register') delete params.url;
        const raw = r() < 0.1 ? JSON.stringify({ action: name, ...params }).slice(0, -3) : JSON.stringify({ ...params, action: name });
        const key = r() < 0.9 ? keys[entry.contract.auth] : keys[['bot', 'merchant', 'owner'][Math.floor(r() * 3)]!];
        const before = await changes();
        const res = await app.handle(
          new Request(`http://localhost/v1/${endpoint}`, { method: 'POST', body: raw, headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) } }),
        );
        const text = await res.text();
        calls++;
        const where = `seed ${seed}: ${endpoint}/${name} ${raw.slice(0, 300)} → ${res.status} ${text.slice(0, 300)}`;
        if (res.status >= 500) throw new Error(`5xx for ${where}`);
        const parsed = JSON.parse(text);
        if (parsed.success === true) continue;
        if (!ERROR_CODES.includes(parsed.error?.code) || !parsed.error.how_to_fix) throw new Error(`bad envelope for ${where}`);
        // Rate-limit windows and idempotency claims are bookkeeping, not state: none are touched by a refused body.
        if ((await changes()) !== before) throw new Error(`an error changed state for ${where}`);
      }
    }
  }
  expect(calls).toBeGreaterThan(1000);
}, 120_000);
