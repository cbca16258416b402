/**
 * Enrolling the owner's passkeys (issue 44) through the real ceremony functions, with the soft
 * authenticator as the browser: the first key is added under the session, a second only under the
 * first's assertion over exactly that key, and each addition enters the decision log with the
 * key (and the assertion it was added under), as verify-log reads it. The soft authenticator's
 * answers are first checked by @simplewebauthn/server on its own, so the other tests rest on real
 * WebAuthn bytes.
 */
import { describe, expect, test } from 'bun:test';
import { generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import { listPasskeys, registrationOptions, finishRegistration, confirmAddition } from '../../src/owner/passkeys.ts';
import { verifyOwnerSignatures } from '../../src/domain/owner-signatures.ts';
import { addWallet, claimFor, ownerWorld } from '../actions/fixtures.ts';
import { SoftAuthenticator } from '../helpers/soft-authenticator.ts';
import { enrol, ledgerState, newAuthenticator } from './passkey-fixtures.ts';

describe('the soft authenticator speaks WebAuthn', () => {
  test('its registration and assertion verify with @simplewebauthn/server; its switches make them fail as a browser would', async () => {
    const origin = 'http://localhost:8787';
    const auth = await SoftAuthenticator.create(origin);
    const reg = await generateRegistrationOptions({ rpName: 'x', rpID: 'localhost', userName: 'o@example.com', attestationType: 'none', authenticatorSelection: { userVerification: 'required' } });
    const registered = await verifyRegistrationResponse({ response: await auth.register(reg), expectedChallenge: reg.challenge, expectedOrigin: origin, expectedRPID: 'localhost', requireUserVerification: true });
    expect(registered.verified).toBe(true);
    expect(registered.registrationInfo!.credential.id).toBe(auth.id);
    expect(registered.registrationInfo!.fmt).toBe('none');
    const credential = registered.registrationInfo!.credential;
    const check = async (s: Parameters<SoftAuthenticator['assert']>[1] = {}) => {
      const opts = await generateAuthenticationOptions({ rpID: 'localhost', userVerification: 'required' });
      return await verifyAuthenticationResponse({ response: await auth.assert(opts, s), expectedChallenge: opts.challenge, expectedOrigin: origin, expectedRPID: 'localhost', credential, requireUserVerification: true }).then(
        (r) => (r.verified ? `ok ${r.authenticationInfo.newCounter}` : 'not verified'),
        (e: Error) => e.message,
      );
    };
    expect(await check()).toBe('ok 1');
    expect(await check()).toBe('ok 2');
    expect(await check({ origin: 'https://evil.example' })).toContain('origin');
    expect(await check({ rpId: 'evil.example' })).toContain('RP ID');
    expect(await check({ userVerified: false })).toContain('verified');
    expect(await check({ challenge: 'AAAAAAAAAAAAAAAAAAAAAA' })).toContain('challenge');
    // A counter not above the last one seen (a cloned authenticator) is refused by the library too.
    expect(await verifyAuthenticationResponse({ response: await auth.assert({ challenge: 'Y2hhbGxlbmdlLWNoYWxsZW5nZQ', rpId: 'localhost' }, { counter: 1 }), expectedChallenge: 'Y2hhbGxlbmdlLWNoYWxsZW5nZQ', expectedOrigin: origin, expectedRPID: 'localhost', credential: { ...credential, counter: 5 }, requireUserVerification: true }).catch((e: Error) => e.message)).toContain('counter');
  });
});

describe('enrolment', () => {
  async function owner() {
    const w = ownerWorld();
    const a = await addWallet(w.services, { name: 'Alpha' });
    const b = await addWallet(w.services, { name: 'Beta' });
    const ownerId = await claimFor(w.services, a.walletId, 'owner@example.com');
    await claimFor(w.services, b.walletId, 'owner@example.com');
    return { w, ownerId, wallets: [a.walletId, b.walletId] };
  }
  const logOf = async (w: ReturnType<typeof ownerWorld>, walletId: string) =>
    (await w.services.db.all<{ seq: bigint; at: bigint; kind: string; data: string }>('SELECT seq, at, kind, data FROM decision_log WHERE wallet_id = ? ORDER BY seq', walletId)).map((r) =>
      JSON.stringify({ type: 'row', seq: Number(r.seq), at: Number(r.at), kind: r.kind, data: JSON.parse(r.data) }),
    );

  test('the first key is added at once and logged in each wallet; a second only under the first key’s assertion over exactly it; the log checks', async () => {
    const { w, ownerId, wallets } = await owner();
    const first = await newAuthenticator(w.services);
    const second = await newAuthenticator(w.services);
    const added = await enrol(w.services, ownerId, first, { name: 'laptop' });
    expect(added).toMatchObject({ credential_id: first.id, name: 'laptop' });
    // A second key: the registration verifies, but nothing is added until an earlier key signs it.
    const options = await registrationOptions(w.services, ownerId);
    expect(options.excludeCredentials?.map((c) => c.id)).toEqual([first.id]);
    expect(options.authenticatorSelection?.userVerification).toBe('required');
    const pending = await finishRegistration(w.services, ownerId, await second.register(options), 'phone');
    expect('confirm' in pending).toBe(true);
    if (!('confirm' in pending)) return;
    expect(pending.confirm.decision).toBe('add a passkey');
    expect(pending.confirm.allowCredentials?.map((c) => c.id)).toEqual([first.id]);
    expect((await listPasskeys(w.services, ownerId)).map((p) => p.name)).toEqual(['laptop']);
    // The new key cannot confirm itself: it is not enrolled yet.
    const before = await ledgerState(w.services, ownerId);
    await expect(confirmAddition(w.services, ownerId, await second.assert(pending.confirm))).rejects.toMatchObject({ details: { reason: 'passkey_required' } });
    expect(await ledgerState(w.services, ownerId)).toBe(before);
    // The first one does.
    const confirmed = await confirmAddition(w.services, ownerId, await first.assert(pending.confirm));
    expect(confirmed).toMatchObject({ credential_id: second.id, name: 'phone' });
    expect((await listPasskeys(w.services, ownerId)).map((p) => p.name).sort()).toEqual(['laptop', 'phone']);
    // Each wallet's log: the first key on the daemon's word, the second under the first's assertion.
    for (const walletId of wallets) {
      const rows = (await logOf(w, walletId)).map((l) => JSON.parse(l));
      const adds = rows.filter((r) => r.kind === 'owner.passkey_added');
      expect(adds.map((r) => r.data.credential_id)).toEqual([first.id, second.id]);
      expect(adds[0].data).toMatchObject({ rp_id: 'localhost', origin: 'http://localhost:8787' });
      expect(adds[0].data.passkey).toBeUndefined();
      expect(adds[1].data.passkey.credential_id).toBe(first.id);
      expect(await verifyOwnerSignatures(walletId, await logOf(w, walletId))).toMatchObject({ ok: true, keys_added: 2, first_bad: null });
    }
  });

  test('the confirm prompt is spent once: the same assertion again adds nothing', async () => {
    const { w, ownerId } = await owner();
    const first = await newAuthenticator(w.services);
    const second = await newAuthenticator(w.services);
    await enrol(w.services, ownerId, first);
    const pending = await finishRegistration(w.services, ownerId, await second.register(await registrationOptions(w.services, ownerId)), 'phone');
    if (!('confirm' in pending)) throw new Error('expected a confirm step');
    const answer = await first.assert(pending.confirm);
    await confirmAddition(w.services, ownerId, answer);
    const before = await ledgerState(w.services, ownerId);
    await expect(confirmAddition(w.services, ownerId, answer)).rejects.toMatchObject({ details: { reason: 'passkey_required' } });
    expect(await ledgerState(w.services, ownerId)).toBe(before);
  });

  test('a registration without user verification, from another origin, for another RP ID or for a spent prompt adds no key', async () => {
    const { w, ownerId } = await owner();
    const auth = await newAuthenticator(w.services);
    const before = await ledgerState(w.services, ownerId);
    for (const s of [{ userVerified: false }, { origin: 'https://evil.example' }, { rpId: 'evil.example' }, { type: 'webauthn.get' }]) {
      const options = await registrationOptions(w.services, ownerId);
      await expect(finishRegistration(w.services, ownerId, await auth.register(options, s), 'x')).rejects.toMatchObject({ errorCode: 'VALIDATION_ERROR' });
    }
    // A spent prompt: the first answer adds the key, the same answer again (another device's) is refused.
    const options = await registrationOptions(w.services, ownerId);
    const other = await newAuthenticator(w.services);
    const answer = await other.register(options);
    expect(await ledgerState(w.services, ownerId)).toBe(before);
    await finishRegistration(w.services, ownerId, answer, 'one');
    await expect(finishRegistration(w.services, ownerId, await auth.register(options), 'two')).rejects.toMatchObject({ errorCode: 'VALIDATION_ERROR' });
    expect((await listPasskeys(w.services, ownerId)).map((p) => p.name)).toEqual(['one']);
  });

  test("another owner's registration prompt does not add a key to this owner", async () => {
    const { w, ownerId } = await owner();
    const stranger = await claimFor(w.services, (await addWallet(w.services)).walletId, 'stranger@example.com');
    const auth = await newAuthenticator(w.services);
    const options = await registrationOptions(w.services, stranger);
    await expect(finishRegistration(w.services, ownerId, await auth.register(options), 'x')).rejects.toMatchObject({ errorCode: 'VALIDATION_ERROR' });
    expect(await listPasskeys(w.services, ownerId)).toEqual([]);
  });
});
