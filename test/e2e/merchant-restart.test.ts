/**
 * Webhook deliveries survive a daemon restart: a real `agent-wallet serve` process queues and
 * first attempts a message (the receiver answers 500), is stopped, and a new process over the
 * same data directory delivers it on schedule with the same webhook-id and a valid signature.
 */
import { afterAll, expect, test } from 'bun:test';
import { ApiClient } from '../../src/client/api.ts';
import { startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { randomAddress, startReceiver, verifyStandardWebhook } from '../webhooks/receiver.ts';

const env = { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' };
const receiver = startReceiver([500], 200);
const daemons: DaemonProcess[] = [];
afterAll(async () => {
  receiver.stop();
  for (const d of daemons) await d.kill().catch(() => {});
});

test('a message that failed before a restart is delivered by the restarted daemon, same webhook-id, valid signature', async () => {
  const first = await startDaemonProcess({ env });
  daemons.push(first);
  const reg = await new ApiClient(first.url).call<any>('merchant', 'register', { name: 'Restart Shop', username: 'restart-shop', payout_address: randomAddress(), webhook_url: receiver.url });
  await receiver.waitFor(1, 8_000);
  expect(receiver.requests[0]!.headers.get('webhook-id')).toMatch(/^msg_/);
  expect(await first.stop()).toBe(0);
  daemons.length = 0;

  const second = await startDaemonProcess({ dataDir: first.dataDir, env });
  daemons.push(second);
  await receiver.waitFor(2, 12_000);
  const [a, b] = receiver.requests as [(typeof receiver.requests)[0], (typeof receiver.requests)[0]];
  expect(b.headers.get('webhook-id')).toBe(a.headers.get('webhook-id'));
  expect(b.body).toBe(a.body);
  expect(b.at - a.at).toBeGreaterThanOrEqual(4_000); // the 5 s (±10%) retry delay, kept across the restart
  expect(await verifyStandardWebhook(reg.webhook.secret, b.headers, b.body, Math.floor(Date.now() / 1000))).toBe(true);
  const merchant = new ApiClient(second.url, reg.api_key);
  const deliveries = await merchant.call<any>('merchant', 'webhook_deliveries', {});
  expect(deliveries.items[0]).toMatchObject({ event_type: 'webhook.test', status: 'delivered', attempts: 2 });
  expect(deliveries.items[0].attempt_log.map((x: any) => x.http_status)).toEqual([500, 200]);
  expect(await second.stop()).toBe(0);
  daemons.length = 0;
}, 30_000);
