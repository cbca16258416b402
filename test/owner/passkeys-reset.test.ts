/**
 * A lost passkey, or a stolen mailbox pretending one is lost (issue 44): a reset started from a
 * sign-in mail link removes the owner's passkeys only after owner.passkey_reset_hours (72 by
 * default), is mailed to the owner at once, and any enrolled passkey cancels it — after which the
 * keys stay, however long one waits. The daemon's clock is driven (services.now), no sleeping.
 * Each wallet's decision log carries the start, the cancel (signed) or the reset, and the owner's
 * signature check of that log accepts it.
 */
import { expect, test } from 'bun:test';
import { requestLogin, resetByLink, followMagicLink } from '../../src/actions/claim.ts';
import { listMail } from '../../src/db/mail.ts';
import { verifyOwnerSignatures } from '../../src/domain/owner-signatures.ts';
import { cancelOwnerReset, currentReset, hasPasskey, listPasskeys } from '../../src/owner/passkeys.ts';
import { addWallet, claimFor, ownerWorld, type OwnerWorld } from '../actions/fixtures.ts';
import { enrol, ledgerState, newAuthenticator, refusedChangingNothing, sign } from './passkey-fixtures.ts';

const HOUR = 3_600_000;
const EMAIL = 'owner@example.com';

async function world(env: Record<string, string> = {}) {
  const w = ownerWorld({ env });
  const wallet = await addWallet(w.services, { name: 'Alpha' });
  const ownerId = await claimFor(w.services, wallet.walletId, EMAIL);
  const key = await newAuthenticator(w.services);
  await enrol(w.services, ownerId, key);
  return { w, ownerId, walletId: wallet.walletId, key };
}

/** The token of the newest sign-in link mailed to the owner (the mailbox is all the attacker has). */
async function mailedLoginToken(w: OwnerWorld): Promise<string> {
  await requestLogin(w.services, EMAIL);
  const mail = (await listMail(w.services.db, 20)).find((m) => m.to_addr === EMAIL && /\/login\/[A-Za-z0-9_-]{43}/.test(m.body));
  return /\/login\/([A-Za-z0-9_-]{43})/.exec(mail!.body)![1]!;
}

const session = () => ({ hash: crypto.getRandomValues(new Uint8Array(32)), expiresAt: Date.now() + HOUR });
const logLines = async (w: OwnerWorld, walletId: string) =>
  (await w.services.db.all<{ seq: bigint; at: bigint; kind: string; data: string }>('SELECT seq, at, kind, data FROM decision_log WHERE wallet_id = ? ORDER BY seq', walletId)).map((r) =>
    JSON.stringify({ type: 'row', seq: Number(r.seq), at: Number(r.at), kind: r.kind, data: JSON.parse(r.data) }),
  );
const kinds = async (w: OwnerWorld, walletId: string) => (await logLines(w, walletId)).map((l) => JSON.parse(l).kind as string);

test('a mail-started reset is mailed at once, changes nothing before owner.passkey_reset_hours, then removes every key', async () => {
  const { w, ownerId, walletId } = await world();
  expect(w.services.config.owner.passkey_reset_hours).toBe(72);
  const started = await resetByLink(w.services, await mailedLoginToken(w));
  if (!started.ok) throw new Error(`reset refused: ${started.reason}`);
  expect(Date.parse(started.reset.effective_at) - Date.parse(started.reset.started_at)).toBe(72 * HOUR);
  // Mailed to the owner at once, with the way to cancel it.
  const mail = (await listMail(w.services.db, 20)).find((m) => m.kind === 'passkey_reset');
  expect(mail).toMatchObject({ to_addr: EMAIL, subject: 'A reset of your passkeys was started' });
  expect(mail!.body).toContain(started.reset.effective_at);
  expect(mail!.body).toContain(`${w.services.publicUrl()}/dashboard/passkeys`);
  expect(await kinds(w, walletId)).toContain('owner.passkey_reset_started');
  // A second reset link while one is open: the same reset, not a new (earlier or later) one.
  const again = await resetByLink(w.services, await mailedLoginToken(w));
  expect(again.ok && again.reset.reset_id).toBe(started.reset.reset_id);
  // Until the delay has passed the key holds: the mailbox still cannot sign in.
  w.advance(72 * HOUR - 1);
  expect(await hasPasskey(w.services, ownerId)).toBe(true);
  expect(await followMagicLink(w.services, await mailedLoginToken(w), session())).toMatchObject({ ok: false, reason: 'passkey' });
  expect(await currentReset(w.services, ownerId)).toMatchObject({ reset_id: started.reset.reset_id });
  // Then it takes effect: the keys are gone (the log says so), and the mailbox signs in as before.
  w.advance(1);
  expect(await hasPasskey(w.services, ownerId)).toBe(false);
  expect(await listPasskeys(w.services, ownerId)).toEqual([]);
  expect(await currentReset(w.services, ownerId)).toBeNull();
  expect((await kinds(w, walletId)).filter((k) => k.startsWith('owner.passkey'))).toEqual(['owner.passkey_added', 'owner.passkey_reset_started', 'owner.passkeys_reset']);
  expect(await verifyOwnerSignatures(walletId, await logLines(w, walletId))).toMatchObject({ ok: true, first_bad: null });
  expect(await followMagicLink(w.services, await mailedLoginToken(w), session())).toMatchObject({ ok: true, ownerId });
});

test('any enrolled passkey cancels the reset; the keys then stay past the delay', async () => {
  const { w, ownerId, walletId, key } = await world();
  const second = await newAuthenticator(w.services);
  await enrol(w.services, ownerId, second, { name: 'phone', under: key });
  const started = await resetByLink(w.services, await mailedLoginToken(w));
  if (!started.ok) throw new Error(`reset refused: ${started.reason}`);
  const resetId = started.reset.reset_id;
  const decision = { kind: 'passkey.reset_cancel' as const, owner_id: ownerId, reset_id: resetId };
  // The mailbox cannot cancel (or keep) it without a key: no answer, garbage, a stranger's key, another origin.
  const stranger = await newAuthenticator(w.services);
  await refusedChangingNothing(w.services, ownerId, () => cancelOwnerReset(w.services, ownerId, resetId, undefined));
  await refusedChangingNothing(w.services, ownerId, () => cancelOwnerReset(w.services, ownerId, resetId, '{"id":"x"}'));
  await refusedChangingNothing(w.services, ownerId, async () => cancelOwnerReset(w.services, ownerId, resetId, await sign(w.services, ownerId, decision, stranger)));
  await refusedChangingNothing(w.services, ownerId, async () => cancelOwnerReset(w.services, ownerId, resetId, await sign(w.services, ownerId, decision, key, { origin: 'https://evil.example' })));
  // The second key (any enrolled one) cancels it, an hour before it would apply.
  w.advance(71 * HOUR);
  const cancelled = await cancelOwnerReset(w.services, ownerId, resetId, await sign(w.services, ownerId, decision, second));
  expect(cancelled.reset_id).toBe(resetId);
  expect(await currentReset(w.services, ownerId)).toBeNull();
  w.advance(30 * 24 * HOUR);
  expect(await hasPasskey(w.services, ownerId)).toBe(true);
  expect((await listPasskeys(w.services, ownerId)).map((p) => p.credential_id).sort()).toEqual([key.id, second.id].sort());
  const rows = (await logLines(w, walletId)).map((l) => JSON.parse(l));
  const cancelRow = rows.find((r) => r.kind === 'owner.passkey_reset_cancelled');
  expect(cancelRow.data.passkey.credential_id).toBe(second.id);
  expect(rows.some((r) => r.kind === 'owner.passkeys_reset')).toBe(false);
  expect(await verifyOwnerSignatures(walletId, await logLines(w, walletId))).toMatchObject({ ok: true, first_bad: null });
  // Cancelled is cancelled: the same answer or another cancel finds nothing open.
  const before = await ledgerState(w.services, ownerId);
  await expect(cancelOwnerReset(w.services, ownerId, resetId, await sign(w.services, ownerId, decision, key))).rejects.toMatchObject({ errorCode: 'NOT_FOUND' });
  expect(await ledgerState(w.services, ownerId)).toBe(before);
});

test('a short configured delay is honoured the same way (owner.passkey_reset_hours)', async () => {
  const { w, ownerId } = await world({ AGENT_WALLET_OWNER_PASSKEY_RESET_HOURS: '0.5' });
  const started = await resetByLink(w.services, await mailedLoginToken(w));
  if (!started.ok) throw new Error(`reset refused: ${started.reason}`);
  expect(Date.parse(started.reset.effective_at) - Date.parse(started.reset.started_at)).toBe(HOUR / 2);
  w.advance(HOUR / 2 - 1);
  expect(await hasPasskey(w.services, ownerId)).toBe(true);
  w.advance(1);
  expect(await hasPasskey(w.services, ownerId)).toBe(false);
});

test('a reset link is spent once, and an owner without a passkey has nothing to reset', async () => {
  const { w } = await world();
  const token = await mailedLoginToken(w);
  expect((await resetByLink(w.services, token)).ok).toBe(true);
  expect(await resetByLink(w.services, token)).toMatchObject({ ok: false, reason: 'used' });
  const bare = ownerWorld();
  const wallet = await addWallet(bare.services);
  await claimFor(bare.services, wallet.walletId, EMAIL);
  expect(await resetByLink(bare.services, await mailedLoginToken(bare))).toMatchObject({ ok: false });
});
