/**
 * The hash-chained decision log (issue 30, items 1–2): every money decision of a wallet is a row
 * chained to the one before, written with the change; heads signed with the daemon's log key. The
 * owner exports it with the real CLI and checks it offline with `owner verify-log` against the key
 * the daemon publishes. Someone with database access then plays the misbehaving operator: editing,
 * deleting or re-ordering one row — or rewriting the chain's hashes after an edit — is caught,
 * naming the first bad row; an untouched log verifies; a log cut at a signed head verifies up to
 * that head and reports the tail as unsigned.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { headStatement, rowHash, verifyLogLines } from '../../src/domain/decision-log.ts';
import { signMovedHeads } from '../../src/evidence/decision-log.ts';
import { signWithLogKey } from '../../src/evidence/log-key.ts';
import { runCli } from '../helpers/daemon.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let dir: string;
let keyUrl: string;
const OWNER = 'owner@example.com';

beforeAll(async () => {
  world = await startWorld();
  ({ alice, bob } = await world.payerAndPayee(1_000_000n));
  for (let i = 0; i < 3; i++) await pay(0.01);
  dir = mkdtempSync(join(tmpdir(), 'aw-log-'));
  keyUrl = `${new URL(world.url).origin}/.well-known/agent-wallet/log-key`;
});
afterAll(async () => {
  await world?.stop();
});

async function pay(amount: number): Promise<void> {
  const intent = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount });
  expect((await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id)).status).toBe('completed');
}

let exports = 0;
/** `owner export-log` with the real CLI; returns the file. */
async function exportLog(): Promise<string> {
  const out = join(dir, `log-${++exports}.jsonl`);
  const r = await runCli(['owner', 'export-log', alice.profile.wallet_id, '--out', out, '--server', world.url, '--json'], { AGENT_WALLET_OWNER_TOKEN: world.ownerToken(OWNER) });
  expect(r.code).toBe(0);
  return out;
}

const verify = (file: string, key = keyUrl) => runCli(['owner', 'verify-log', file, '--key', key, '--json']);

/** The owner's export over HTTP (the CLI's is shown once above), to a file. */
async function exportFile(): Promise<string> {
  const out = join(dir, `log-${++exports}.jsonl`);
  const res = await fetch(`${world.url}/owner/decision-log?wallet_id=${alice.profile.wallet_id}`, { headers: { authorization: `Bearer ${world.ownerToken(OWNER)}` } });
  expect(res.status).toBe(200);
  writeFileSync(out, await res.text());
  return out;
}

/** verify-log's check in this process, against the published key: the CLI's answer shape. */
async function check(file: string): Promise<{ code: number; json: any }> {
  const jwks = (await (await fetch(keyUrl)).json()) as { keys: { x: string }[] };
  const report = verifyLogLines(readFileSync(file, 'utf8').split('\n'), Uint8Array.from(Buffer.from(jwks.keys[0]!.x, 'base64url')));
  return { code: report.ok ? 0 : 1, json: report };
}
const db = () => world.services.db;
const rows = () =>
  (db().query('SELECT seq, kind, data, at, hash FROM decision_log WHERE wallet_id = ? ORDER BY seq').all(alice.profile.wallet_id) as { seq: bigint; kind: string; data: string; at: bigint; hash: Uint8Array }[]).map((r) => ({
    ...r,
    seq: Number(r.seq),
    at: Number(r.at),
  }));
const seqOf = (kind: string) => rows().find((r) => r.kind === kind)!.seq;

test('every decision of a payment is a row — created, signed (message hash), completed — and an untouched export verifies against the published key', async () => {
  const kinds = rows().map((r) => r.kind);
  // The guard rails' decision on each intent (the audit log's), with its rule.
  expect(kinds.filter((k) => k === 'decision')).toHaveLength(3);
  expect(kinds.filter((k) => k === 'payment.created')).toHaveLength(3);
  expect(kinds.filter((k) => k === 'signing.signed')).toHaveLength(3);
  expect(kinds.filter((k) => k === 'payment.completed')).toHaveLength(3);
  const signed = JSON.parse(rows().find((r) => r.kind === 'signing.signed')!.data);
  expect(signed.message_sha256).toMatch(/^[0-9a-f]{64}$/);
  // The chain outcome: its signature and slot.
  const completed = JSON.parse(rows().find((r) => r.kind === 'payment.completed')!.data);
  expect(completed.signature).toBe(signed.signature);
  expect(completed.slot).toBeGreaterThan(0);
  const file = await exportLog();
  const r = await verify(file);
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ ok: true, first_bad: null, unsigned_tail: 0 });
  // The export is itself a decision, and the file ends at the head it signed.
  expect(rows().at(-1)!.kind).toBe('log.exported');
  expect(r.json.signed_through).toBe(rows().at(-1)!.seq);
  expect(r.json.rows).toBe(rows().length);
  // Against the chain: every completed payment landed, moving what the log says.
  const onChain = await runCli(['owner', 'verify-log', file, '--key', keyUrl, '--rpc', world.simnet.url, '--json']);
  expect(onChain.code).toBe(0);
  expect(onChain.json.chain).toEqual({ checked: 3, first_mismatch: null });
  // Another key (not the daemon's) does not vouch for it.
  const otherKey = join(dir, 'other.jwks');
  writeFileSync(otherKey, JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: Buffer.alloc(32, 7).toString('base64url') }] }));
  const wrongKey = await verify(file, otherKey);
  expect(wrongKey.code).toBe(1);
  expect(wrongKey.json.first_bad.reason).toContain('does not match the rows or the log key');
});

test('each decision names the version of the rails it was made under, the one the rails change logged', async () => {
  await world.ownerClient(OWNER).call('owner', 'set_guard_rails', { wallet_id: alice.profile.wallet_id, rails: { approval_above: '20' } });
  await pay(0.01);
  const set = JSON.parse(rows().filter((r) => r.kind === 'guard_rails.set').at(-1)!.data);
  const decision = JSON.parse(rows().filter((r) => r.kind === 'decision').at(-1)!.data);
  expect(set.rails_version).toMatch(/^[0-9a-f]{16}$/);
  expect(decision.rails_version).toBe(set.rails_version);
  expect(decision.rule).toBeDefined();
});

test('a daemon that lies with its own key (a consistent, signed log with a changed amount) is caught against the chain', async () => {
  const lines = readFileSync(await exportFile(), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const k = lines.find((l) => l.kind === 'payment.completed').seq;
  let prev: Uint8Array | null = null;
  for (const l of lines) {
    if (l.type === 'row') {
      if (l.seq === k) l.data.amount = 0.02;
      if (l.seq >= k) {
        l.prev_hash = prev ? bytesToHex(prev) : l.prev_hash;
        l.hash = bytesToHex(rowHash(hexToBytes(l.prev_hash), { wallet_id: l.wallet_id, seq: l.seq, at: l.at, kind: l.kind, data: JSON.stringify(l.data) }));
      }
      prev = hexToBytes(l.hash);
    } else if (l.type === 'head' && l.seq >= k) {
      l.hash = bytesToHex(prev!);
      l.signature = Buffer.from(signWithLogKey(world.services.masterKey, headStatement(l.wallet_id, l.seq, prev!))).toString('base64url');
    }
  }
  const lying = join(dir, 'lying.jsonl');
  writeFileSync(lying, lines.map((l) => JSON.stringify(l)).join('\n'));
  expect((await check(lying)).code).toBe(0);
  const r = await runCli(['owner', 'verify-log', lying, '--key', keyUrl, '--rpc', world.simnet.url, '--json']);
  expect(r.code).toBe(1);
  expect(r.json.chain.first_mismatch).toMatchObject({ seq: k });
  // Amount and fee: the chain moved 0.01 less than the lying log claims.
  const [, moved, says] = /moved (\d+) micro-USDC on chain, the log says (\d+)$/.exec(r.json.chain.first_mismatch.reason)!;
  expect(Number(says) - Number(moved)).toBe(10_000);
});

test('an edited row is caught, naming it', async () => {
  const k = seqOf('payment.completed');
  const before = rows().find((r) => r.seq === k)!.data;
  db().run("UPDATE decision_log SET data = replace(data, '0.01', '0.02') WHERE wallet_id = ? AND seq = ?", [alice.profile.wallet_id, k]);
  try {
    const r = await check(await exportFile());
    expect(r.code).toBe(1);
    expect(r.json.first_bad).toMatchObject({ seq: k });
    expect(r.json.first_bad.reason).toContain('was edited');
    expect(r.json.ok).toBe(false);
  } finally {
    db().run('UPDATE decision_log SET data = ? WHERE wallet_id = ? AND seq = ?', [before, alice.profile.wallet_id, k]);
  }
  expect((await check(await exportFile())).code).toBe(0);
});

test('a deleted row is caught as missing, naming it', async () => {
  const k = seqOf('signing.signed');
  const saved = db().query('SELECT * FROM decision_log WHERE wallet_id = ? AND seq = ?').get(alice.profile.wallet_id, k) as Record<string, any>;
  db().run('DELETE FROM decision_log WHERE wallet_id = ? AND seq = ?', [alice.profile.wallet_id, k]);
  try {
    const r = await check(await exportFile());
    expect(r.code).toBe(1);
    expect(r.json.first_bad.reason).toBe(`rows ${k}–${k} are missing`);
  } finally {
    db().run('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', [saved.wallet_id, saved.seq, saved.at, saved.kind, saved.data, saved.prev_hash, saved.hash]);
  }
});

test('two rows swapped (re-ordered) are caught at the first of them', async () => {
  const k = seqOf('payment.created');
  const [a, b] = rows().filter((r) => r.seq === k || r.seq === k + 1);
  const swap = (to: typeof a, from: typeof a) => db().run('UPDATE decision_log SET kind = ?, data = ?, at = ? WHERE wallet_id = ? AND seq = ?', [from!.kind, from!.data, from!.at, alice.profile.wallet_id, to!.seq]);
  swap(a, b);
  swap(b, a);
  try {
    const r = await check(await exportFile());
    expect(r.code).toBe(1);
    expect(r.json.first_bad).toMatchObject({ seq: k });
  } finally {
    swap(a, a);
    swap(b, b);
  }
});

test('an edit whose hashes are all recomputed down the chain is caught by the first signed head after it, and so is undoing it once an export signed it', async () => {
  const k = seqOf('payment.completed');
  const wallet = alice.profile.wallet_id;
  type Row = { seq: number; at: number; kind: string; data: string; prev_hash: Uint8Array; hash: Uint8Array };
  const all = () => (db().query('SELECT seq, at, kind, data, prev_hash, hash FROM decision_log WHERE wallet_id = ? ORDER BY seq').all(wallet) as Row[]).map((r) => ({ ...r, seq: Number(r.seq), at: Number(r.at) }));
  const saved = all().filter((r) => r.seq >= k);
  /** Rewrites rows from `from` on with `edit`, recomputing every hash after (what an operator without the log key can do). */
  const rechain = (from: number, edit: (r: Row) => string) => {
    let prevHash = all().find((r) => r.seq === from)!.prev_hash;
    for (const r of all().filter((x) => x.seq >= from)) {
      const data = edit(r);
      const hash = rowHash(prevHash, { wallet_id: wallet, seq: r.seq, at: r.at, kind: r.kind, data });
      db().run('UPDATE decision_log SET data = ?, prev_hash = ?, hash = ? WHERE wallet_id = ? AND seq = ?', [data, prevHash, hash, wallet, r.seq]);
      prevHash = hash;
    }
  };
  rechain(k, (r) => (r.seq === k ? r.data.replace('0.01', '0.02') : r.data));
  try {
    const r = await check(await exportFile());
    expect(r.code).toBe(1);
    const firstHead = Number((db().query('SELECT min(seq) AS s FROM decision_log_heads WHERE wallet_id = ? AND seq >= ?').get(wallet, k) as { s: bigint }).s);
    expect(r.json.first_bad).toMatchObject({ seq: firstHead });
    expect(r.json.first_bad.reason).toContain(`the log was rewritten up to row ${firstHead}`);
  } finally {
    // Put the true rows back and chain the export rows written meanwhile onto them.
    const original = new Map(saved.map((r) => [r.seq, r.data]));
    rechain(k, (r) => original.get(r.seq) ?? r.data);
  }
  // The export during the rewrite signed the rewritten head: undoing the rewrite shows too.
  const undone = await check(await exportFile());
  expect(undone.code).toBe(1);
  expect(undone.json.first_bad.reason).toContain('the log was rewritten');
  db().run('DELETE FROM decision_log_heads WHERE wallet_id = ? AND seq = ?', [wallet, undone.json.first_bad.seq]);
  expect((await check(await exportFile())).code).toBe(0);
});

test('a log cut at a signed head verifies up to it; cut later, the rows after the head are reported as an unsigned tail', async () => {
  const first = readFileSync(await exportFile(), 'utf8').trim().split('\n');
  await pay(0.02);
  const lines = readFileSync(await exportFile(), 'utf8').trim().split('\n');
  const firstHeadSeq = JSON.parse(first.at(-1)!).seq as number;
  expect(JSON.parse(first.at(-1)!).type).toBe('head');
  const atHead = lines.findIndex((l) => l.includes('"type":"head"') && JSON.parse(l).seq === firstHeadSeq);
  const cutAtHead = join(dir, 'cut-at-head.jsonl');
  writeFileSync(cutAtHead, lines.slice(0, atHead + 1).join('\n'));
  expect((await check(cutAtHead)).json).toMatchObject({ ok: true, signed_through: firstHeadSeq, unsigned_tail: 0 });
  // Later rows without the head that signs them: chained, reported unsigned.
  const cutLater = join(dir, 'cut-later.jsonl');
  writeFileSync(cutLater, lines.slice(0, atHead + 4).join('\n'));
  const r = await check(cutLater);
  expect(r.json).toMatchObject({ ok: true, signed_through: firstHeadSeq, unsigned_tail: 3 });
  expect(r.code).toBe(0);
});

test('the head-signing job signs every wallet whose chain moved, once; its heads verify in the export', async () => {
  await pay(0.01);
  const head = (walletId: string) => Number((db().query('SELECT max(seq) AS s FROM decision_log WHERE wallet_id = ?').get(walletId) as { s: bigint }).s);
  const signed = signMovedHeads(world.services);
  expect(signed).toBeGreaterThanOrEqual(2);
  for (const w of [alice.profile.wallet_id, bob.profile.wallet_id]) {
    expect(db().query('SELECT 1 FROM decision_log_heads WHERE wallet_id = ? AND seq = ?').get(w, head(w))).not.toBeNull();
  }
  expect(signMovedHeads(world.services)).toBe(0);
  const jobHeadSeq = head(alice.profile.wallet_id);
  const file = await exportFile();
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(lines.some((l) => l.type === 'head' && l.seq === jobHeadSeq)).toBe(true);
  expect((await check(file)).code).toBe(0);
});

test('the export is the owner\'s: another owner\'s token, or none, gets nothing', async () => {
  const url = `${world.url}/owner/decision-log?wallet_id=${alice.profile.wallet_id}`;
  expect((await fetch(url)).status).toBe(401);
  const other = await fetch(url, { headers: { authorization: `Bearer ${world.ownerToken('stranger@example.com')}` } });
  expect(other.status).toBe(404);
});
