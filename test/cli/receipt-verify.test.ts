/**
 * `agent-wallet receipt verify FILE --key URL|FILE` (issue 43): a receipt saved from the CLI, or
 * downloaded from a paid checkout page, checks against the daemon's published key (its URL or a
 * saved copy) and the command prints what it attests; a receipt whose claim was changed, or checked
 * against another key, exits 1 and says why; without --key it is a usage error.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let dir: string;
let keyUrl: string;
let txId: string;
let good: string;

beforeAll(async () => {
  world = await startWorld();
  const origin = new URL(world.url).origin;
  world.services.publicUrl = () => origin;
  keyUrl = `${origin}/.well-known/agent-wallet/log-key`;
  ({ alice, bob } = await world.payerAndPayee(1_000_000n));
  dir = tempDir();
  const intent = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: 0.25, reference: 'inv-7', note: 'two coffees' });
  expect((await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id)).status).toBe('completed');
  txId = intent.transaction_id;
  const saved = await runCli(['receipt', txId, '--server', world.url, '--home', alice.home]);
  expect(saved.code).toBe(0);
  good = join(dir, 'receipt.jws');
  writeFileSync(good, saved.stdout);
}, 30_000);
afterAll(async () => {
  await world?.stop();
});

test('a receipt checks against the key URL the daemon publishes, and the command prints what it attests', async () => {
  const [r, json] = await Promise.all([runCli(['receipt', 'verify', good, '--key', keyUrl]), runCli(['receipt', 'verify', good, '--key', keyUrl, '--json'])]);
  expect(r.code).toBe(0);
  expect(r.stdout).toStartWith('OK: signed by key ');
  expect(r.stdout).toContain(`It attests: 0.25 USDC`);
  expect(r.stdout).toContain(`paid by @${alice.username} ${alice.address} to @${bob.username}`);
  expect(r.stdout).toContain('(reference inv-7)');
  expect(r.stdout).toContain(`receipt of ${txId}`);

  expect(json.code).toBe(0);
  expect(json.json).toMatchObject({ valid: true, file: good, key: keyUrl, claims: { sub: txId, amount: '0.25', amount_micro: '250000', status: 'completed', reference: 'inv-7' } });
});

test('a saved copy of the key works as well as its URL; a relative receipt path is read from the directory the command runs in', async () => {
  const keyFile = join(dir, 'log-key.json');
  writeFileSync(keyFile, await (await fetch(keyUrl)).text());
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, '..', '..', 'src', 'main.ts'), 'receipt', 'verify', 'receipt.jws', '--key', 'log-key.json'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  expect(out).toStartWith('OK: ');
});

test('a receipt whose amount was changed exits 1 and says the signature does not match', async () => {
  const [header, payload, signature] = (await Bun.file(good).text()).trim().split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  const tampered = join(dir, 'tampered.jws');
  writeFileSync(tampered, `${header}.${Buffer.from(JSON.stringify({ ...claims, amount: '250', amount_micro: '250000000' })).toString('base64url')}.${signature}\n`);
  // The payee changed: also refused.
  const redirected = join(dir, 'redirected.jws');
  writeFileSync(redirected, `${header}.${Buffer.from(JSON.stringify({ ...claims, to: { ...claims.to, address: alice.address } })).toString('base64url')}.${signature}`);
  const [r, json] = await Promise.all([runCli(['receipt', 'verify', tampered, '--key', keyUrl]), runCli(['receipt', 'verify', redirected, '--key', keyUrl, '--json'])]);
  expect(r.code).toBe(1);
  expect(r.stdout).toContain('BAD: ');
  expect(r.stdout).toContain('the signature does not match the key');
  expect(r.stdout).not.toContain('250 USDC');
  expect(json.code).toBe(1);
  expect(json.json).toMatchObject({ valid: false });
});

test('checked against another key (a JWKS of another Ed25519 key) the receipt exits 1', async () => {
  const other = ed25519.getPublicKey(ed25519.utils.randomSecretKey());
  const wrongKey = join(dir, 'other-key.json');
  writeFileSync(wrongKey, JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: Buffer.from(other).toString('base64url'), kid: 'someone-else', alg: 'EdDSA', use: 'sig' }] }));
  const r = await runCli(['receipt', 'verify', good, '--key', wrongKey]);
  expect(r.code).toBe(1);
  expect(r.stdout).toContain('the signature does not match the key');
  expect(r.stdout).toContain('which the key source does not hold');
});

test('without --key, or with a file that is not a receipt, it refuses', async () => {
  const junk = join(dir, 'junk.jws');
  writeFileSync(junk, 'hello');
  const [missing, r] = await Promise.all([runCli(['receipt', 'verify', good]), runCli(['receipt', 'verify', junk, '--key', keyUrl])]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('--key');
  expect(r.code).toBe(1);
  expect(r.stdout).toContain('not a compact JWS');
});

test("the payer's receipt downloaded from a paid checkout page verifies with the same command", async () => {
  world.services.simnetRpcUrl = world.simnet.url;
  const link = await bob.api.call<any>('bot', 'create_payment_request', { description: 'Sourdough loaf', amount: '6.5' });
  const page = await fetch(link.url);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const pressed = await fetch(`${link.url}/simnet-pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.headers.get('set-cookie')!.split(';')[0]! },
    body: `csrf=${csrf}`,
  });
  expect(pressed.status).toBe(303);
  const file = join(dir, `receipt-${link.request_id}.jws`);
  const download = await fetch(`${link.url}/receipt.jws`);
  expect(download.status).toBe(200);
  writeFileSync(file, await download.text());
  const r = await runCli(['receipt', 'verify', file, '--key', keyUrl]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`It attests: 6.5 USDC paid by `);
  expect(r.stdout).toContain(`to @${bob.username} ${bob.address} for "Sourdough loaf"`);
  expect(r.stdout).toContain(`receipt of ${link.request_id}`);
});
