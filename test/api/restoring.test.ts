import { expect, test } from 'bun:test';
import { createApp } from '../../src/api/app.ts';
import { blocksToGo } from '../../src/ops/restore-state.ts';
import { ownerWorld } from '../actions/fixtures.ts';
import { call, testServices } from '../helpers/services.ts';

test('while a restore is reconciled: reads and /healthz answer, an action that changes state is SERVICE_UNAVAILABLE with Retry-After and the height awaited, a page POST too', async () => {
  const services = testServices();
  services.restore = { active: true, untilBlockHeight: 1_000n, blockHeight: 900n };
  const app = createApp(services);
  const ping = await call(app, '/v1/bot', { action: 'ping' });
  expect(ping.status).toBe(200);
  const health = await call(app, '/healthz');
  expect(health.body).toEqual({ status: 'restoring', until_block_height: '1000', blocks_to_go: 101 });

  const held = await call(app, '/v1/bot', { action: 'register', name: 'Late Agent', round1_package: {} });
  expect(held.status).toBe(503);
  expect(held.headers.get('retry-after')).toBe('30');
  expect(held.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', restoring: true, until_block_height: '1000', blocks_to_go: 101 });

  const w = ownerWorld();
  w.services.restore = { active: true, untilBlockHeight: null, blockHeight: null };
  const page = await w.app.handle(new Request('http://localhost/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=a%40example.com' }));
  expect(page.status).toBe(503);
  expect(await page.text()).toContain('reading the chain');

  services.restore = { active: false, untilBlockHeight: null, blockHeight: null };
  expect((await call(app, '/healthz')).body).toEqual({ status: 'ok' });
});

test('blocks to go counts the awaited height itself, and nothing once it is passed or unknown', () => {
  expect(blocksToGo({ active: true, untilBlockHeight: 10n, blockHeight: 10n })).toBe(1);
  expect(blocksToGo({ active: true, untilBlockHeight: 10n, blockHeight: 11n })).toBe(0);
  expect(blocksToGo({ active: true, untilBlockHeight: null, blockHeight: 5n })).toBe(0);
});
