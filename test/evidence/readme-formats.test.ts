/**
 * The README's description of the decision log's hashes and signatures and of the recovery kit's
 * sealed share (issue 40 item 12) is exact: the Node.js block it prints, using only node:crypto,
 * is taken out of README.md and run — under Node itself — against a real export checked with the
 * daemon's published key and a kit sealed by the real code, so the doc cannot drift from them.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { getBase58Decoder } from '@solana/kit';
import { kitPublicPackage, makeKit } from '../../src/client/recovery-kit.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { Secret } from '../../src/frost/secret.ts';
import { startWorld, type World } from '../helpers/world.ts';

const README = readFileSync(join(import.meta.dir, '..', '..', 'README.md'), 'utf8');
const PASSPHRASE = 'correct horse battery staple';
const Point = ed25519.Point;
const Fn = Point.Fn;

let world: World;
let dir: string;
let logFile: string;
let jwksFile: string;
let kitFile: string;
let share: bigint;
let commitments: [Uint8Array, Uint8Array];

/** The block the README marks as the one its formats are checked with. */
function readmeBlock(): string {
  const at = README.indexOf('<!-- formats-check:');
  expect(at).toBeGreaterThan(0);
  const m = /```js\n([\s\S]*?)```/.exec(README.slice(at))!;
  return m[1]!;
}

/** Runs `body` under Node with the README's block imported as `check`; returns what it prints (JSON). */
async function underNode(body: string): Promise<any> {
  const proc = Bun.spawn(['node', '--input-type=module', '-e', `import * as check from ${JSON.stringify(`file://${join(dir, 'check.mjs')}`)};\n${body}`], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, KIT_PASSPHRASE: PASSPHRASE } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out: out ? JSON.parse(out) : null, err };
}

beforeAll(async () => {
  world = await startWorld();
  const { alice, bob } = await world.payerAndPayee(1_000_000n);
  await (await world.ownerClient('owner@example.com')).call('owner', 'set_guard_rails', { wallet_id: bob.profile.wallet_id, rails: { approval_above: '20' } });
  const intent = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount: 0.01, note: 'café ☕ "quoted"' });
  expect((await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id)).status).toBe('completed');
  dir = mkdtempSync(join(tmpdir(), 'aw-formats-'));
  writeFileSync(join(dir, 'check.mjs'), readmeBlock());
  // The payee's log: rails set (nested data), the payment received with its note (text outside ASCII), the export.
  const res = await fetch(`${world.url}/owner/decision-log?wallet_id=${bob.profile.wallet_id}`, { headers: { authorization: `Bearer ${await world.ownerToken('owner@example.com')}` } });
  expect(res.status).toBe(200);
  writeFileSync((logFile = join(dir, 'log.jsonl')), await res.text());
  writeFileSync((jwksFile = join(dir, 'log-key.json')), await (await fetch(`${new URL(world.url).origin}/.well-known/agent-wallet/log-key`)).text());
  // A 2-of-3 key made here (f(x) = a0 + a1·x): the kit holds f(3), sealed by the real code.
  const [a0, a1] = [Fn.create(BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(40))).toString('hex')}`)), Fn.create(7_777_777n)];
  commitments = [Point.BASE.multiply(a0).toBytes(), Point.BASE.multiply(a1).toBytes()];
  share = Fn.add(a0, Fn.mul(a1, 3n));
  const pub = kitPublicPackage({ commitments: [Buffer.from(commitments[0]).toString('hex'), Buffer.from(commitments[1]).toString('hex')] });
  const kit = makeKit({ walletId: 'wal_readmeformats', address: getBase58Decoder().decode(commitments[0]), pub, share: new Secret(share), passphrase: PASSPHRASE, now: new Date() });
  writeFileSync((kitFile = join(dir, 'kit.json')), JSON.stringify(kit));
});
afterAll(async () => {
  await world?.stop();
});

test("the README's row hash, head and signed-range formats check a real export against the daemon's published key", async () => {
  const r = await underNode(`import { readFileSync } from 'node:fs';
    console.log(JSON.stringify({ rows: check.checkLog(readFileSync(${JSON.stringify(logFile)}, 'utf8'), JSON.parse(readFileSync(${JSON.stringify(jwksFile)}, 'utf8'))) }));`);
  expect(r.err).toBe('');
  const rows = readFileSync(logFile, 'utf8').trim().split('\n').filter((l) => l.includes('"type":"row"')).length;
  expect(rows).toBeGreaterThan(3);
  expect(readFileSync(logFile, 'utf8')).toContain('café ☕ \\"quoted\\"');
  expect(r.out).toEqual({ rows });
  // And the same recipe refuses an edited row and a signed range moved to another file.
  const lines = readFileSync(logFile, 'utf8').trim().split('\n');
  const edited = lines.map((l) => (l.includes('"type":"row"') && JSON.parse(l).seq === 1 ? l.replace('"seq":1,"at":', '"seq":1,"at":1') : l));
  writeFileSync(join(dir, 'edited.jsonl'), edited.join('\n'));
  const bad = await underNode(`import { readFileSync } from 'node:fs';
    check.checkLog(readFileSync(${JSON.stringify(join(dir, 'edited.jsonl'))}, 'utf8'), JSON.parse(readFileSync(${JSON.stringify(jwksFile)}, 'utf8')));`);
  expect(bad.code).not.toBe(0);
  expect(bad.err).toContain('row 1 does not check');
});

test("the README's kit format opens a kit the real code sealed: its share, little-endian, lies on the key (s·B = C0 + 3·C1)", async () => {
  const r = await underNode(`import { readFileSync } from 'node:fs';
    const { bytes, scalar } = check.openKit(JSON.parse(readFileSync(${JSON.stringify(kitFile)}, 'utf8')), process.env.KIT_PASSPHRASE);
    console.log(JSON.stringify({ length: bytes.length, scalar: scalar.toString() }));`);
  expect(r.err).toBe('');
  expect(r.out.length).toBe(32);
  const s = BigInt(r.out.scalar);
  expect(s).toBe(share);
  expect(Point.BASE.multiply(s).equals(Point.fromBytes(commitments[0]).add(Point.fromBytes(commitments[1]).multiply(3n)))).toBe(true);
  // Another wallet's id as associated data does not open it.
  const kit = JSON.parse(readFileSync(kitFile, 'utf8'));
  writeFileSync(join(dir, 'relabelled.json'), JSON.stringify({ ...kit, wallet_id: 'wal_other' }));
  const other = await underNode(`import { readFileSync } from 'node:fs';
    check.openKit(JSON.parse(readFileSync(${JSON.stringify(join(dir, 'relabelled.json'))}, 'utf8')), process.env.KIT_PASSPHRASE);`);
  expect(other.code).not.toBe(0);
  expect(other.err).toContain('Unsupported state or unable to authenticate data');
});
