/**
 * Landing on a congested cluster (issue 14): simnet's congestion fault drops every transaction
 * priced below a floor it advertises through getRecentPrioritizationFees. Ten agents' payments,
 * made concurrently through the real HTTP app with the real client (confirm, check, FROST round,
 * submit and wait), all land, for few RPC calls each — counted by simnet itself.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { getTx } from '../../src/db/transactions.ts';
import { decodeMessage } from '../../src/solana/decode.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

const FLOOR = 10_000n;
const PAYMENTS = 10;

let world: World;
let payers: Agent[];
let bob: Agent;

beforeAll(async () => {
  world = await startWorld();
  bob = await world.agent('Bob');
  await world.claim(bob.walletId, 'owner@example.com');
  await world.fund(bob.address, 0n);
  payers = [];
  for (let i = 0; i < PAYMENTS; i++) {
    const agent = await world.agent(`Payer ${i}`);
    await world.claim(agent.walletId, 'owner@example.com');
    await world.fund(agent.address, 10_000_000n);
    payers.push(agent);
  }
});
afterAll(() => world.stop());

test(`with unpriced transactions dropped, ${PAYMENTS} of ${PAYMENTS} concurrent payments complete at ≤ 5 RPC calls each`, async () => {
  world.simnet.setCongestion(FLOOR);
  try {
    world.simnet.resetStats();
    const started = Date.now();
    const results = await Promise.all(
      payers.map(async (agent) => {
        const intent = await agent.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: 0.5 });
        return { id: intent.transaction_id, done: await confirmSignSubmit(agent.api, agent.profile, intent.transaction_id) };
      }),
    );
    const elapsed = Date.now() - started;
    const stats = world.simnet.stats();
    expect(results.map((r) => r.done.status)).toEqual(Array(PAYMENTS).fill('completed'));
    for (const { id } of results) {
      const price = decodeMessage((await getTx(world.services.db, id))!.message!).instructions.find((i) => i.kind === 'computeUnitPrice');
      expect(price).toMatchObject({ kind: 'computeUnitPrice' });
      expect((price as { microLamports: bigint }).microLamports).toBeGreaterThanOrEqual(FLOOR);
    }
    expect(stats.dropped).toBe(0);
    const perPayment = stats.total / PAYMENTS;
    console.log(`congestion e2e: ${PAYMENTS}/${PAYMENTS} completed in ${elapsed} ms; ${stats.total} RPC calls (${perPayment} per payment): ${JSON.stringify(stats.calls)}`);
    expect(perPayment).toBeLessThanOrEqual(5);
    // Shared between the concurrent payments, not fetched by each: the fee estimate, the blockhash, the status look.
    expect(stats.calls.getRecentPrioritizationFees).toBeLessThanOrEqual(2);
    expect(stats.calls.getLatestBlockhash).toBeLessThanOrEqual(2);
    expect(stats.calls.getSignatureStatuses).toBeLessThan(PAYMENTS);
  } finally {
    world.simnet.setCongestion(null);
  }
});
