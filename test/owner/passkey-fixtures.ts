/**
 * Builders for the passkey tests (issue 44): an owner enrols soft authenticators through the real
 * ceremony functions (src/owner/passkeys.ts), signs decisions with them, and the ledger is read back
 * to prove a refused step changed nothing.
 */
import { expect } from 'bun:test';
import { newId } from '../../src/contract/ids.ts';
import { insertEnrollment, moveEnrollment } from '../../src/db/recovery.ts';
import type { OwnerDecision } from '../../src/domain/owner-decision.ts';
import { confirmAddition, decisionOptions, finishRegistration, registrationOptions } from '../../src/owner/passkeys.ts';
import type { Services } from '../../src/services.ts';
import { SoftAuthenticator, type AnswerSwitches } from '../helpers/soft-authenticator.ts';

/** The origin an honest browser reports for the daemon's pages (its public URL's). */
export const originOf = (services: Services) => new URL(services.publicUrl()).origin;

/** A new soft authenticator for the daemon's relying party. */
export const newAuthenticator = (services: Services) => SoftAuthenticator.create(originOf(services));

/**
 * Enrols `auth` for the owner. The first key is added at once; a later one needs `under` (an
 * enrolled key) to sign the addition, as the dashboard's second prompt does.
 */
export async function enrol(services: Services, ownerId: string, auth: SoftAuthenticator, o: { name?: string; under?: SoftAuthenticator } = {}) {
  const options = await registrationOptions(services, ownerId);
  const done = await finishRegistration(services, ownerId, await auth.register(options), o.name ?? 'laptop');
  if ('added' in done) return done.added;
  if (!o.under) throw new Error('a later passkey needs an earlier one to confirm it');
  return await confirmAddition(services, ownerId, await o.under.assert(done.confirm));
}

/** The owner's answer to the prompt for `decision` (decisionOptions → the authenticator), with an attacker's switches. */
export async function sign(services: Services, ownerId: string, decision: OwnerDecision, auth: SoftAuthenticator, s: AnswerSwitches = {}) {
  return await auth.assert(await decisionOptions(services, ownerId, decision), s);
}

/** A refusal for want of the owner's passkey: 403, reason passkey_required. */
export async function expectPasskeyRequired(p: Promise<unknown>, why?: string | RegExp): Promise<void> {
  let err: any = null;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err, 'the step was not refused').not.toBeNull();
  expect({ code: err.errorCode, status: err.status, reason: err.details?.reason }).toEqual({ code: 'UNAUTHORIZED', status: 403, reason: 'passkey_required' });
  if (why !== undefined) expect(err.message).toMatch(why);
}

/** Marks a recovery kit enrolled for the wallet (as agent-wallet owner recovery finish does), so a sweep can be announced. */
export async function enrolledKit(services: Services, ownerId: string, walletId: string): Promise<void> {
  const now = services.now().getTime();
  const id = newId('recoveryEnrollment');
  await services.db.transaction(async () => {
    await insertEnrollment(services.db, { enrollment_id: id, wallet_id: walletId, owner_id: ownerId, now, expires_at: now + 3_600_000 });
    await moveEnrollment(services.db, id, ['open'], 'enrolled', now, { fingerprint: 'f'.repeat(64), enrolled_at: now });
  });
}

/**
 * What a refused step must leave as it was: the approval and its transaction, the rails, tokens,
 * sessions, sweeps, enrolments, grants, passkeys and every log row of the owner's wallets.
 */
export async function ledgerState(services: Services, ownerId: string) {
  const db = services.db;
  const q = (sql: string, ...p: unknown[]) => db.all<Record<string, unknown>>(sql, ...(p as never[]));
  const wallets = (await q('SELECT wallet_id FROM wallets WHERE owner_id = ? ORDER BY wallet_id', ownerId)).map((r) => String(r.wallet_id));
  const inWallets = `(${wallets.map(() => '?').join(',') || "''"})`;
  return JSON.stringify(
    {
      approvals: await q(`SELECT approval_id, status, decided_at, decided_by, evidence FROM approvals WHERE wallet_id IN ${inWallets} ORDER BY approval_id`, ...wallets),
      transactions: await q(`SELECT transaction_id, status, amount FROM transactions WHERE wallet_id IN ${inWallets} ORDER BY transaction_id`, ...wallets),
      rails: await q(`SELECT * FROM guard_rails WHERE wallet_id IN ${inWallets} ORDER BY wallet_id`, ...wallets),
      tokens: await q('SELECT token_id, revoked_at FROM owner_tokens WHERE owner_id = ? ORDER BY token_id', ownerId),
      sessions: await q('SELECT count(*) AS n FROM owner_sessions WHERE owner_id = ?', ownerId),
      sweeps: await q(`SELECT sweep_id, status FROM recovery_sweeps WHERE wallet_id IN ${inWallets} ORDER BY sweep_id`, ...wallets),
      enrollments: await q(`SELECT enrollment_id, status FROM recovery_enrollments WHERE wallet_id IN ${inWallets} ORDER BY enrollment_id`, ...wallets),
      passkeys: await q('SELECT credential_id, counter, removed_at FROM owner_passkeys WHERE owner_id = ? ORDER BY credential_id', ownerId),
      grants: await q('SELECT grant_id, used_at FROM passkey_grants WHERE owner_id = ? ORDER BY grant_id', ownerId),
      resets: await q('SELECT reset_id, cancelled_at, done_at FROM passkey_resets WHERE owner_id = ? ORDER BY reset_id', ownerId),
      log: await q(`SELECT wallet_id, seq, kind FROM decision_log WHERE wallet_id IN ${inWallets} ORDER BY wallet_id, seq`, ...wallets),
      audit: await q(`SELECT count(*) AS n FROM audit_log WHERE wallet_id IN ${inWallets}`, ...wallets),
    },
    (_k, v) => (typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v),
  );
}

/** Runs `step`, expects it refused for want of the passkey, and the ledger unchanged. */
export async function refusedChangingNothing(services: Services, ownerId: string, step: () => Promise<unknown>, why?: string | RegExp): Promise<void> {
  const before = await ledgerState(services, ownerId);
  await expectPasskeyRequired(step(), why);
  expect(await ledgerState(services, ownerId)).toBe(before);
}
