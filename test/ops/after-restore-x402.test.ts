/**
 * After a restore, an x402 purchase signed before the backup whose bytes a seller held and landed
 * after it is recovered as that purchase (issue 24.6): its memo is the seller's, so only the
 * wallet's signature of the purchase's exact message can name it. Not as a plain payment beside
 * a purchase left unsettled, whose later release would read the ledger wrong.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Address } from '@solana/kit';
import { payPurchase } from '../../src/client/x402.ts';
import { getTx } from '../../src/db/transactions.ts';
import { getPurchaseById } from '../../src/db/x402.ts';
import { scanDeposits } from '../../src/jobs/deposits.ts';
import { reconcileAfterRestore } from '../../src/ops/after-restore.ts';
import { resolvePendingPurchases } from '../../src/x402/purchase.ts';
import { paymentHeader } from '../../src/x402/wire.ts';
import { memoryLogger } from '../helpers/services.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';
import { ledgerChainViolations, ledgerBalance } from '../reliability/money-invariants.ts';
import { sellerAddress, startFacilitator, startHostileSeller, startV2Seller, type Facilitator, type HostileSeller, type Server, signOnly } from '../x402/sellers.ts';

let world: World;
let facilitator: Facilitator;
let payTo: Address;
let hostile: HostileSeller;
let honest: Server;
let agent: Agent;

beforeAll(async () => {
  // Fast slots: the reconciliation waits out the newest blockhash (150 slots).
  world = await startWorld({ slotMs: 50, env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' } });
  facilitator = await startFacilitator(world);
  payTo = await sellerAddress(world);
  hostile = await startHostileSeller(world, facilitator, { payTo, amount: '10000' });
  honest = await startV2Seller(world, facilitator, { payTo });
  agent = await world.agent('Buyer');
  await world.claim(agent.walletId, 'buyer@example.com');
  await world.fund(agent.address, 5_000_000n);
  await scanDeposits(world.services);
});
afterAll(async () => {
  await hostile?.stop();
  await honest?.stop();
  await world?.stop();
});

const ledgerOf = async (walletId: string): Promise<bigint> => await ledgerBalance(world.services.db, walletId);

test('a purchase signed before the backup and landed by the seller after it is completed as the purchase, not recovered as a plain payment', async () => {
  const { db } = world.services;
  const sellerBefore = await world.balance(payTo);
  const prepared = await agent.api.call<any>('bot', 'x402_prepare', { url: `${honest.url}/paid` });
  await payPurchase(signOnly(agent.api), agent.profile, prepared.fetch_id, prepared);
  expect((await getPurchaseById(db, prepared.fetch_id))!.status).toBe('signed');

  // The seller holds the bytes and lands them after the backup (this ledger stays as the backup has it).
  const p = (await getPurchaseById(db, prepared.fetch_id))!;
  const header = paymentHeader(2, (JSON.parse(p.requirements) as { resource?: unknown }).resource, JSON.parse(p.accepted), Buffer.from((await getTx(db, p.transaction_id))!.signed_tx!).toString('base64'));
  const payload = JSON.parse(Buffer.from(header.value, 'base64').toString('utf8'));
  const landed = await hostile.settleHeld({ payload, accepted: payload.accepted });

  await db.run("INSERT INTO meta (key, value) VALUES ('restored_from_backup', ?)", JSON.stringify({ backup_created_at: '2026-01-01T00:00:00.000Z', restored_at: new Date().toISOString() }));
  const { log } = memoryLogger();
  const summary = await reconcileAfterRestore({ ...world.services, log });
  expect(summary).toMatchObject({ settledFromChain: [prepared.transaction_id], recoveredFromChain: [] });
  expect(await getPurchaseById(db, prepared.fetch_id)).toMatchObject({ status: 'completed', signature: landed });
  expect(await getTx(db, prepared.transaction_id)).toMatchObject({ status: 'completed', signature: landed });
  const settled = (await db.get("SELECT count(*) AS n FROM events WHERE type = 'x402.settled' AND data LIKE ?", `%${prepared.fetch_id}%`)) as { n: number };
  expect(Number(settled.n)).toBe(1);
  // The sweep that runs next finds nothing to release; the ledger is the chain for the buyer and the seller.
  await resolvePendingPurchases(world.services);
  expect((await getPurchaseById(db, prepared.fetch_id))!.status).toBe('completed');
  const sold = (await db.get("SELECT coalesce(sum(amount), 0) AS s FROM transactions WHERE type = 'x402' AND status = 'completed' AND to_address = ?", payTo)) as { s: bigint };
  expect(
    ledgerChainViolations('an x402 purchase landed across a restore', [
      { account: agent.username, ledger: await ledgerOf(agent.walletId), chain: await world.balance(agent.address) },
      { account: `seller ${payTo}`, ledger: BigInt(sold.s), chain: (await world.balance(payTo)) - sellerBefore },
    ]),
  ).toEqual([]);
}, 60_000);
