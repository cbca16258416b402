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
import { headStatement, rowHash, verifyLogLines } from '../../src/domain/decision-log.ts';
import { appendAudit, appendEvent } from '../../src/db/events.ts';
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
  ({ alice, bob } = await world.payerAndPayee(5_000_000n));
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
  const r = await runCli(['owner', 'export-log', alice.profile.wallet_id, '--out', out, '--server', world.url, '--json'], { AGENT_WALLET_OWNER_TOKEN: await world.ownerToken(OWNER) });
  expect(r.code).toBe(0);
  return out;
}

const verify = (file: string, key = keyUrl) => runCli(['owner', 'verify-log', file, '--key', key, '--json']);
/** verify-log against the daemon's key and the chain. */
const verifyOnChain = (file: string) => runCli(['owner', 'verify-log', file, '--key', keyUrl, '--rpc', world.simnet.url, '--json']);

/** The owner's export over HTTP (the CLI's is shown once above), to a file. */
async function exportFile(): Promise<string> {
  const out = join(dir, `log-${++exports}.jsonl`);
  const res = await fetch(`${world.url}/owner/decision-log?wallet_id=${alice.profile.wallet_id}`, { headers: { authorization: `Bearer ${await world.ownerToken(OWNER)}` } });
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
const rows = async () =>
  ((await db().all('SELECT seq, kind, data, at, hash FROM decision_log WHERE wallet_id = ? ORDER BY seq', alice.profile.wallet_id)) as { seq: bigint; kind: string; data: string; at: bigint; hash: Uint8Array }[]).map((r) => ({
    ...r,
    seq: Number(r.seq),
    at: Number(r.at),
  }));
const seqOf = async (kind: string) => (await rows()).find((r) => r.kind === kind)!.seq;

test('every decision of a payment is a row — created, signed (message hash), completed — and an untouched export verifies against the published key', async () => {
  const kinds = (await rows()).map((r) => r.kind);
  // The guard rails' decision on each intent (the audit log's), with its rule.
  expect(kinds.filter((k) => k === 'decision')).toHaveLength(3);
  expect(kinds.filter((k) => k === 'payment.created')).toHaveLength(3);
  expect(kinds.filter((k) => k === 'signing.signed')).toHaveLength(3);
  expect(kinds.filter((k) => k === 'payment.completed')).toHaveLength(3);
  const signed = JSON.parse((await rows()).find((r) => r.kind === 'signing.signed')!.data);
  expect(signed.message_sha256).toMatch(/^[0-9a-f]{64}$/);
  // The chain outcome: its signature and slot.
  const completed = JSON.parse((await rows()).find((r) => r.kind === 'payment.completed')!.data);
  expect(completed.signature).toBe(signed.signature);
  expect(completed.slot).toBeGreaterThan(0);
  const file = await exportLog();
  const r = await verify(file);
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ ok: true, first_bad: null, unsigned_tail: 0, coverage: 'whole', key_checked: true });
  // The export is itself a decision, and the file ends at the head it signed.
  expect((await rows()).at(-1)!.kind).toBe('log.exported');
  expect(r.json.signed_through).toBe((await rows()).at(-1)!.seq);
  expect(r.json.rows).toBe((await rows()).length);
  // Against the chain: every completed payment landed, moving what the log says.
  const onChain = await verifyOnChain(file);
  expect(onChain.code).toBe(0);
  expect(onChain.json.chain).toEqual({ checked: 3, fee_account: world.services.feePayer.address, first_mismatch: null });
  // Another key (not the daemon's) does not vouch for it.
  const otherKey = join(dir, 'other.jwks');
  writeFileSync(otherKey, JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: Buffer.alloc(32, 7).toString('base64url') }] }));
  const wrongKey = await verify(file, otherKey);
  expect(wrongKey.code).toBe(1);
  expect(wrongKey.json.first_bad.reason).toContain('does not match the rows or the log key');
});

test('each decision names the version of the rails it was made under, the one the rails change logged', async () => {
  await (await world.ownerClient(OWNER)).call('owner', 'set_guard_rails', { wallet_id: alice.profile.wallet_id, rails: { approval_above: '20' } });
  await pay(0.01);
  const set = JSON.parse((await rows()).filter((r) => r.kind === 'guard_rails.set').at(-1)!.data);
  const decision = JSON.parse((await rows()).filter((r) => r.kind === 'decision').at(-1)!.data);
  expect(set.rails_version).toMatch(/^[0-9a-f]{16}$/);
  expect(decision.rails_version).toBe(set.rails_version);
  expect(decision.rule).toBeDefined();
});

test('a daemon that lies with its own key (a consistent, signed log with a changed amount) is caught against the chain', async () => {
  const k = await seqOf('payment.completed');
  // The payee got 0.01 on chain, the lying log claims 0.02.
  expect(await lieCaughtOnChain(k, (r) => (r.seq === k ? r.data.replace('"amount":0.01', '"amount":0.02') : r.data))).toBe('the payee was credited 10000 micro-USDC on chain, the log says 20000');
});

test('an edited row is caught, naming it', async () => {
  const k = await seqOf('payment.completed');
  const before = (await rows()).find((r) => r.seq === k)!.data;
  await db().run("UPDATE decision_log SET data = replace(data, '0.01', '0.02') WHERE wallet_id = ? AND seq = ?", ...[alice.profile.wallet_id, k]);
  try {
    const r = await check(await exportFile());
    expect(r.code).toBe(1);
    expect(r.json.first_bad).toMatchObject({ seq: k });
    expect(r.json.first_bad.reason).toContain('was edited');
    expect(r.json.ok).toBe(false);
  } finally {
    await db().run('UPDATE decision_log SET data = ? WHERE wallet_id = ? AND seq = ?', ...[before, alice.profile.wallet_id, k]);
  }
  expect((await check(await exportFile())).code).toBe(0);
});

test('a deleted row is caught as missing, naming it', async () => {
  const k = await seqOf('signing.signed');
  const saved = (await db().get('SELECT * FROM decision_log WHERE wallet_id = ? AND seq = ?', alice.profile.wallet_id, k)) as Record<string, any>;
  await db().run('DELETE FROM decision_log WHERE wallet_id = ? AND seq = ?', ...[alice.profile.wallet_id, k]);
  try {
    const r = await check(await exportFile());
    expect(r.code).toBe(1);
    expect(r.json.first_bad.reason).toBe(`rows ${k}–${k} are missing`);
  } finally {
    await db().run('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', ...[saved.wallet_id, saved.seq, saved.at, saved.kind, saved.data, saved.prev_hash, saved.hash]);
  }
});

test('two rows swapped (re-ordered) are caught at the first of them', async () => {
  const k = await seqOf('payment.created');
  const [a, b] = (await rows()).filter((r) => r.seq === k || r.seq === k + 1);
  const swap = async (to: typeof a, from: typeof a) => await db().run('UPDATE decision_log SET kind = ?, data = ?, at = ? WHERE wallet_id = ? AND seq = ?', ...[from!.kind, from!.data, from!.at, alice.profile.wallet_id, to!.seq]);
  await swap(a, b);
  await swap(b, a);
  try {
    const r = await check(await exportFile());
    expect(r.code).toBe(1);
    expect(r.json.first_bad).toMatchObject({ seq: k });
  } finally {
    await swap(a, a);
    await swap(b, b);
  }
});

test('an edit whose hashes are all recomputed down the chain is caught by the first signed head after it, and so is undoing it once an export signed it', async () => {
  const k = await seqOf('payment.completed');
  const wallet = alice.profile.wallet_id;
  type Row = { seq: number; at: number; kind: string; data: string; prev_hash: Uint8Array; hash: Uint8Array };
  const all = async () => ((await db().all('SELECT seq, at, kind, data, prev_hash, hash FROM decision_log WHERE wallet_id = ? ORDER BY seq', wallet)) as Row[]).map((r) => ({ ...r, seq: Number(r.seq), at: Number(r.at) }));
  const saved = (await all()).filter((r) => r.seq >= k);
  /** Rewrites rows from `from` on with `edit`, recomputing every hash after (what an operator without the log key can do). */
  const rechain = async (from: number, edit: (r: Row) => string) => {
    let prevHash = (await all()).find((r) => r.seq === from)!.prev_hash;
    for (const r of (await all()).filter((x) => x.seq >= from)) {
      const data = edit(r);
      const hash = rowHash(prevHash, { wallet_id: wallet, seq: r.seq, at: r.at, kind: r.kind, data });
      await db().run('UPDATE decision_log SET data = ?, prev_hash = ?, hash = ? WHERE wallet_id = ? AND seq = ?', ...[data, prevHash, hash, wallet, r.seq]);
      prevHash = hash;
    }
  };
  await rechain(k, (r) => (r.seq === k ? r.data.replace('0.01', '0.02') : r.data));
  try {
    const r = await check(await exportFile());
    expect(r.code).toBe(1);
    const firstHead = Number(((await db().get('SELECT min(seq) AS s FROM decision_log_heads WHERE wallet_id = ? AND seq >= ?', wallet, k)) as { s: bigint }).s);
    expect(r.json.first_bad).toMatchObject({ seq: firstHead });
    expect(r.json.first_bad.reason).toContain(`the log was rewritten up to row ${firstHead}`);
  } finally {
    // Put the true rows back and chain the export rows written meanwhile onto them.
    const original = new Map(saved.map((r) => [r.seq, r.data]));
    await rechain(k, (r) => original.get(r.seq) ?? r.data);
  }
  // The export during the rewrite signed the rewritten head: undoing the rewrite shows too.
  const undone = await check(await exportFile());
  expect(undone.code).toBe(1);
  expect(undone.json.first_bad.reason).toContain('the log was rewritten');
  await db().run('DELETE FROM decision_log_heads WHERE wallet_id = ? AND seq = ?', ...[wallet, undone.json.first_bad.seq]);
  expect((await check(await exportFile())).code).toBe(0);
});

test('a log cut at a signed head verifies up to it, saying it has no signed end; cut later, the rows after the head are reported as an unsigned tail', async () => {
  const first = readFileSync(await exportFile(), 'utf8').trim().split('\n');
  await pay(0.02);
  const lines = readFileSync(await exportFile(), 'utf8').trim().split('\n');
  expect(JSON.parse(first.at(-1)!).type).toBe('end');
  const firstHeadSeq = JSON.parse(first.at(-2)!).seq as number;
  expect(JSON.parse(first.at(-2)!).type).toBe('head');
  const atHead = lines.findIndex((l) => l.includes('"type":"head"') && JSON.parse(l).seq === firstHeadSeq);
  const cutAtHead = join(dir, 'cut-at-head.jsonl');
  writeFileSync(cutAtHead, lines.slice(0, atHead + 1).join('\n'));
  expect((await check(cutAtHead)).json).toMatchObject({ ok: true, coverage: 'cut', range: null, signed_through: firstHeadSeq, unsigned_tail: 0 });
  const human = await runCli(['owner', 'verify-log', cutAtHead, '--key', keyUrl]);
  expect(human.code).toBe(0);
  expect(human.stdout).toContain('The file has no signed end');
  // Later rows without the head that signs them: chained, reported unsigned.
  const nextHead = lines.findIndex((l, i) => i > atHead && l.includes('"type":"head"'));
  const cutLater = join(dir, 'cut-later.jsonl');
  writeFileSync(cutLater, lines.slice(0, nextHead).join('\n'));
  const r = await check(cutLater);
  expect(r.json).toMatchObject({ ok: true, signed_through: firstHeadSeq, unsigned_tail: nextHead - atHead - 1 });
  expect(r.json.unsigned_tail).toBeGreaterThan(0);
  expect(r.code).toBe(0);
});

test('a batch signs the head of each wallet it moved once, at its newest row, and those heads verify in the export', async () => {
  await Promise.all([pay(0.01), pay(0.01)]);
  const wallet = alice.profile.wallet_id;
  const heads = ((await db().all('SELECT seq FROM decision_log_heads WHERE wallet_id = ? ORDER BY seq', wallet)) as { seq: bigint }[]).map((h) => Number(h.seq));
  const newest = (await rows()).at(-1)!.seq;
  expect(heads.at(-1)).toBe(newest);
  // Fewer heads than rows: a commit's rows share its head.
  expect(heads.length).toBeLessThan(newest);
  const file = await exportFile();
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(lines.filter((l) => l.type === 'head').length).toBe(heads.length + 1);
  expect((await check(file)).code).toBe(0);
});

test('a transaction outside a batch that appends several rows for a wallet signs its head once, at the newest row, before it commits', async () => {
  const wallet = alice.profile.wallet_id;
  const headCount = async () => Number(((await db().get('SELECT count(*) AS n FROM decision_log_heads WHERE wallet_id = ?', wallet)) as { n: bigint }).n);
  const before = await headCount();
  const now = Date.now();
  // An event and its audit entry in one transaction, as an intent or an approval writes them; and a savepoint rolled back after.
  await db().transaction(async () => {
    await appendEvent(db(), { walletId: wallet, type: 'test.event', data: {}, now });
    await appendAudit(db(), { walletId: wallet, actor: 'owner', kind: 'test.audit', data: {}, now });
    try {
      await db().transaction(async () => {
        await appendAudit(db(), { walletId: wallet, actor: 'owner', kind: 'test.undone', data: {}, now });
        throw new Error('undone');
      });
    } catch {}
  });
  expect((await rows()).at(-1)!.kind).toBe('test.audit');
  expect((await headCount()) - before).toBe(1);
  expect(await db().get('SELECT 1 FROM decision_log_heads WHERE wallet_id = ? AND seq = ?', wallet, (await rows()).at(-1)!.seq)).not.toBeNull();
});

/** The misbehaving daemon: edits rows of `wallet` in its database from row `k` on, recomputes every hash after, and signs every head from `k` on again with its own log key. Returns the undo. */
async function lieInDb(wallet: string, k: number, edit: (r: { seq: number; kind: string; data: string }) => string): Promise<() => Promise<void>> {
  // One transaction: a row the daemon appends meanwhile would otherwise break the forged chain.
  return db().transaction(() => lie(wallet, k, edit));
}

async function lie(wallet: string, k: number, edit: (r: { seq: number; kind: string; data: string }) => string): Promise<() => Promise<void>> {
  type Row = { seq: number; at: number; kind: string; data: string; prev_hash: Uint8Array; hash: Uint8Array };
  const all = async () => ((await db().all('SELECT seq, at, kind, data, prev_hash, hash FROM decision_log WHERE wallet_id = ? ORDER BY seq', wallet)) as Row[]).map((r) => ({ ...r, seq: Number(r.seq), at: Number(r.at) }));
  const savedRows = (await db().all('SELECT * FROM decision_log WHERE wallet_id = ? AND seq >= ?', wallet, k)) as Record<string, any>[];
  const savedHeads = (await db().all('SELECT * FROM decision_log_heads WHERE wallet_id = ? AND seq >= ?', wallet, k)) as Record<string, any>[];
  let prevHash = (await all()).find((r) => r.seq === k)!.prev_hash;
  const hashes = new Map<number, Uint8Array>();
  for (const r of (await all()).filter((x) => x.seq >= k)) {
    const data = edit(r);
    const hash = rowHash(prevHash, { wallet_id: wallet, seq: r.seq, at: r.at, kind: r.kind, data });
    await db().run('UPDATE decision_log SET data = ?, prev_hash = ?, hash = ? WHERE wallet_id = ? AND seq = ?', ...[data, prevHash, hash, wallet, r.seq]);
    hashes.set(r.seq, hash);
    prevHash = hash;
  }
  for (const h of savedHeads) {
    const seq = Number(h.seq);
    await db().run('UPDATE decision_log_heads SET hash = ?, signature = ? WHERE wallet_id = ? AND seq = ?', ...[hashes.get(seq)!, signWithLogKey(world.services.masterKey, headStatement(wallet, seq, hashes.get(seq)!)), wallet, seq]);
  }
  return () =>
    db().transaction(async () => {
      await db().run('DELETE FROM decision_log WHERE wallet_id = ? AND seq >= ?', ...[wallet, k]);
      await db().run('DELETE FROM decision_log_heads WHERE wallet_id = ? AND seq >= ?', ...[wallet, k]);
      for (const r of savedRows) await db().run('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', ...[r.wallet_id, r.seq, r.at, r.kind, r.data, r.prev_hash, r.hash]);
      for (const h of savedHeads) await db().run('INSERT INTO decision_log_heads (wallet_id, seq, hash, signed_at, signature) VALUES (?, ?, ?, ?, ?)', ...[h.wallet_id, h.seq, h.hash, h.signed_at, h.signature]);
    });
}

test('issue 40 item 10: deleting the oldest rows of a wallet\'s log is caught — a whole-log export starts at row 1, its range signed in its last line', async () => {
  const wallet = alice.profile.wallet_id;
  const saved = (await db().all('SELECT * FROM decision_log WHERE wallet_id = ? AND seq <= 3', wallet)) as Record<string, any>[];
  await db().run('DELETE FROM decision_log WHERE wallet_id = ? AND seq <= 3', ...[wallet]);
  try {
    const r = await verify(await exportLog());
    expect(r.code).toBe(1);
    expect(r.json.first_bad.reason).toContain('rows 1–3 are missing');
  } finally {
    for (const r of saved) await db().run('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', ...[r.wallet_id, r.seq, r.at, r.kind, r.data, r.prev_hash, r.hash]);
  }
  // The same cut made in the file: its signed range says it starts at row 1.
  const lines = readFileSync(await exportFile(), 'utf8').trim().split('\n');
  const cut = join(dir, 'cut-start.jsonl');
  writeFileSync(cut, lines.filter((l) => !(/"type":"(row|head)"/.test(l) && JSON.parse(l).seq <= 3)).join('\n'));
  const r = await verify(cut);
  expect(r.code).toBe(1);
  expect(r.json.first_bad.reason).toContain('rows 1–3 are missing');
  // Untouched, the same export verifies as the whole log.
  const whole = await verify(await exportFile());
  expect(whole.code).toBe(0);
  expect(whole.json).toMatchObject({ ok: true, coverage: 'whole', range: { from: null, first_seq: 1 } });
});

test('issue 40 item 10: a partial export (--from) verifies only as what it is, saying the rows before it were not checked; its range cannot be passed off as the whole log', async () => {
  const since = new Date().toISOString();
  await pay(0.01);
  const out = join(dir, `log-${++exports}.jsonl`);
  const exported = await runCli(['owner', 'export-log', alice.profile.wallet_id, '--out', out, '--from', since, '--server', world.url, '--json'], { AGENT_WALLET_OWNER_TOKEN: await world.ownerToken(OWNER) });
  expect(exported.code).toBe(0);
  const r = await verify(out);
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ ok: true, coverage: 'partial', range: { from: since } });
  const first = r.json.range.first_seq as number;
  expect(first).toBeGreaterThan(1);
  const human = await runCli(['owner', 'verify-log', out, '--key', keyUrl]);
  expect(human.stdout).toContain(`partial export: rows ${first}–`);
  expect(human.stdout).toContain(`rows 1–${first - 1} are not in this file and were not checked`);
  // Claiming it is the whole log (its signed range edited) breaks the range's signature.
  const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const end = lines.at(-1);
  expect(end.type).toBe('end');
  end.from = null;
  const forged = join(dir, 'forged-range.jsonl');
  writeFileSync(forged, lines.map((l) => JSON.stringify(l)).join('\n'));
  const bad = await verify(forged);
  expect(bad.code).toBe(1);
  expect(bad.json.first_bad.reason).toContain("the export's signed range");
});

/** Lies in the database from row `k` (lieInDb), then exports: the log checks against the daemon's key, the chain refuses it at row `k`. Returns why; undoes the lie. */
async function lieCaughtOnChain(k: number, edit: Parameters<typeof lieInDb>[2]): Promise<string> {
  const undo = await lieInDb(alice.profile.wallet_id, k, edit);
  try {
    const file = await exportLog();
    expect((await verify(file)).code).toBe(0);
    const r = await verifyOnChain(file);
    expect(r.code).toBe(1);
    expect(r.json.chain.first_mismatch).toMatchObject({ seq: k });
    return r.json.chain.first_mismatch.reason;
  } finally {
    await undo();
  }
}

test('issue 40 item 11: every commit signs the head of each wallet it moved, so a row re-chained right after its payment (before any job or export) is caught', async () => {
  await pay(0.03);
  const wallet = alice.profile.wallet_id;
  // No job ran and no export: the newest rows of payer and payee are signed already.
  for (const w of [wallet, bob.profile.wallet_id]) {
    const newest = Number(((await db().get('SELECT max(seq) AS s FROM decision_log WHERE wallet_id = ?', w)) as { s: bigint }).s);
    expect(await db().get('SELECT 1 FROM decision_log_heads WHERE wallet_id = ? AND seq = ?', w, newest)).not.toBeNull();
  }
  // The operator (database access, no log key) re-chains the payment's completion.
  const k = (await rows()).filter((r) => r.kind === 'payment.completed').at(-1)!.seq;
  type Row = { seq: number; at: number; kind: string; data: string; prev_hash: Uint8Array };
  const all = async () => ((await db().all('SELECT seq, at, kind, data, prev_hash FROM decision_log WHERE wallet_id = ? AND seq >= ? ORDER BY seq', wallet, k)) as Row[]).map((r) => ({ ...r, seq: Number(r.seq), at: Number(r.at) }));
  const saved = (await db().all('SELECT * FROM decision_log WHERE wallet_id = ? AND seq >= ?', wallet, k)) as Record<string, any>[];
  let prevHash = (await all())[0]!.prev_hash;
  for (const r of (await all())) {
    const data = r.seq === k ? r.data.replace('0.03', '0.3') : r.data;
    const hash = rowHash(prevHash, { wallet_id: wallet, seq: r.seq, at: r.at, kind: r.kind, data });
    await db().run('UPDATE decision_log SET data = ?, prev_hash = ?, hash = ? WHERE wallet_id = ? AND seq = ?', ...[data, prevHash, hash, wallet, r.seq]);
    prevHash = hash;
  }
  let exported = '';
  try {
    exported = await exportFile();
    const r = await check(exported);
    expect(r.code).toBe(1);
    expect(r.json.first_bad.reason).toContain('the log was rewritten');
  } finally {
    await db().run('DELETE FROM decision_log WHERE wallet_id = ? AND seq >= ?', ...[wallet, k]);
    await db().run('DELETE FROM decision_log_heads WHERE wallet_id = ? AND seq > ?', ...[wallet, Math.max(...saved.map((r) => Number(r.seq)))]);
    for (const r of saved) await db().run('INSERT INTO decision_log (wallet_id, seq, at, kind, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', ...[r.wallet_id, r.seq, r.at, r.kind, r.data, r.prev_hash, r.hash]);
  }
  expect((await check(await exportFile())).code).toBe(0);
});

test('issue 40 item 12: a daemon that moves 0.5 from a payment\'s amount to its fee and signs the log again with its own key is caught against the chain, naming what the payee got', async () => {
  await pay(0.6);
  const k = (await rows()).filter((r) => r.kind === 'payment.completed').at(-1)!.seq;
  const moved = await lieCaughtOnChain(k, (r) => {
    if (r.seq !== k) return r.data;
    const d = JSON.parse(r.data);
    expect(d).toMatchObject({ amount: 0.6, fee: 0.01 });
    return JSON.stringify({ ...d, amount: 0.1, fee: 0.51 });
  });
  expect(moved).toContain('the payee was credited 600000 micro-USDC on chain, the log says 100000');
  // The fee alone: 0.5 more to the fee account than the chain shows (the payee's amount kept, the sender's total changed).
  const fee = await lieCaughtOnChain(k, (r) => (r.seq === k ? JSON.stringify({ ...JSON.parse(r.data), fee: 0.51 }) : r.data));
  expect(fee).toContain('the fee account was credited 10000 micro-USDC on chain, the log says 510000');
  const honest = await verifyOnChain(await exportLog());
  expect(honest.code).toBe(0);
  expect(honest.json.chain.first_mismatch).toBeNull();
});

test('issue 40 item 17: verify-log without --key says plainly that nothing was checked against the daemon\'s key, and does not exit 0', async () => {
  const file = await exportFile();
  const json = await runCli(['owner', 'verify-log', file, '--json']);
  expect(json.code).toBe(1);
  expect(json.json).toMatchObject({ ok: false, first_bad: null, key_checked: false });
  const human = await runCli(['owner', 'verify-log', file]);
  expect(human.code).toBe(1);
  expect(human.stdout).toContain("NOT VERIFIED against the daemon's key");
  // A file forged end to end under a key of the forger's own, named in its header, passes the
  // chain and heads; only --key tells it apart.
  expect((await verify(file)).code).toBe(0);
});

test('--rpc checks the chain only against the address and fee account the signed end names: a file without one is refused, its header being nobody\'s word', async () => {
  const lines = readFileSync(await exportFile(), 'utf8').trim().split('\n');
  const header = JSON.parse(lines[0]!);
  const cut = join(dir, 'no-end.jsonl');
  writeFileSync(cut, `${[JSON.stringify({ ...header, address: bob.profile.address }), ...lines.slice(1, -1)].join('\n')}\n`);
  const r = await verifyOnChain(cut);
  expect(r.code).not.toBe(0);
  expect(r.json?.chain).toBeUndefined();
});

test('the export is the owner\'s: another owner\'s token, or none, gets nothing', async () => {
  const url = `${world.url}/owner/decision-log?wallet_id=${alice.profile.wallet_id}`;
  expect((await fetch(url)).status).toBe(401);
  const other = await fetch(url, { headers: { authorization: `Bearer ${await world.ownerToken('stranger@example.com')}` } });
  expect(other.status).toBe(404);
});
