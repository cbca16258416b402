import { test, expect } from 'bun:test';
import { startWorld } from '../helpers/world.ts';
import { startFacilitator, startV2Seller, startV1Seller, sellerAddress } from './sellers.ts';
test('scratch', async () => {
  const world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost' } });
  const f = await startFacilitator(world);
  const payTo = await sellerAddress(world);
  const s = await startV2Seller(world, f, { payTo });
  const r = await fetch(`${s.url}/paid`);
  console.log(r.status, [...r.headers]);
  const h = r.headers.get('payment-required');
  console.log(JSON.stringify(JSON.parse(Buffer.from(h!, 'base64').toString()), null, 1));
  console.log(await r.text());
  const v1 = await startV1Seller(f, { payTo, amount: '20000' });
  const r1 = await fetch(`${v1.url}/v1-paid`);
  console.log(r1.status, await r1.text());
  await s.stop(); await v1.stop(); await world.stop();
});
