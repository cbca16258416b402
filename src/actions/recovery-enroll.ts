/**
 * Enrolling the owner's recovery share (DESIGN §4.1), the daemon's side. The daemon is one of the
 * two helpers of the repairable sharing: it splits 2·f(2), hands the agent one piece, adds the
 * agent's piece to the one it keeps, and holds that report for the owner, sealed, until the owner
 * collects it. It relays the agent's report as a box sealed to a key it never sees, so it never
 * holds f(3) nor anything that yields it. Only the wallet's owner starts, collects and finishes;
 * only the wallet's agent runs the middle; anyone else's ids are NOT_FOUND.
 */
import { apiGrant } from '../owner/passkeys.ts';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { AppError } from '../errors.ts';
import { AGENT_RECOVERY, OWNER_RECOVERY } from '../contract/recovery-enroll.ts';
import { newId } from '../contract/ids.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import { currentEnrollment, enrollmentInProgress, getEnrollment, insertEnrollment, moveEnrollment, type EnrollmentRow } from '../db/recovery.ts';
import { ownerWallet } from '../db/owners.ts';
import type { WalletRow } from '../db/wallets.ts';
import { walletKeyPackage } from '../frost/coordinator-dkg.ts';
import { RepairError, recoveryFingerprint, repairSplit, repairSum, type HelperReport } from '../frost/recovery-share.ts';
import { open, seal } from '../frost/seal.ts';
import { decodePublicPackage } from '../frost/wire.ts';
import { ownerActor } from '../domain/owner-actor.ts';
import type { Services } from '../services.ts';
import { callerOwner, requireOwnerWallet } from './owner.ts';
import { implement } from './registry.ts';
import { callerWallet } from './wallet.ts';

/** How long an enrollment code stays usable. */
export const ENROLLMENT_TTL_MS = 60 * 60 * 1000;

const iso = (ms: bigint | number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
const reportAad = (enrollmentId: string) => `recovery:${enrollmentId}:daemon_report`;

const notFound = () =>
  new AppError('NOT_FOUND', 'Enrollment not found for this wallet.', { howToFix: 'Use the enrollment code the owner made for this wallet (agent-wallet owner recovery start on the owner’s machine).' });

/** The enrollment, if `mayUse` accepts it (the caller's wallet or owner), it is not past its time, and it is in one of `statuses`. */
async function liveEnrollment(services: Services, enrollmentId: string, mayUse: (row: EnrollmentRow) => Promise<boolean> | boolean, statuses: EnrollmentRow['status'][]): Promise<EnrollmentRow> {
  const row = await getEnrollment(services.db, enrollmentId);
  if (!row || !(await mayUse(row))) throw notFound();
  const now = services.now().getTime();
  if (['open', 'split', 'delivered'].includes(row.status) && Number(row.expires_at) < now) {
    await services.db.transaction(async () => await moveEnrollment(services.db, enrollmentId, ['open', 'split', 'delivered'], 'expired', now, { daemon_report: null, agent_box: null }));
    throw new AppError('INVALID_STATUS', 'This enrollment expired.', { howToFix: 'The owner starts a new one (agent-wallet owner recovery start) and hands the agent the new code.' });
  }
  if (!statuses.includes(row.status)) {
    const next: Record<string, string> = {
      open: "The agent has not run its half yet: on the agent's machine, run agent-wallet recovery enroll CODE.",
      split: "The agent's report has not arrived. If its run failed after the exchange, the owner starts a new enrollment (agent-wallet owner recovery start): a split is never run twice.",
      delivered: 'Both reports are in: the owner finishes with agent-wallet owner recovery finish.',
      enrolled: 'This enrollment is complete.',
    };
    throw new AppError('INVALID_STATUS', `This enrollment is ${row.status}.`, { howToFix: next[row.status] ?? 'The owner starts a new one (agent-wallet owner recovery start).' });
  }
  return row;
}

function publicPackageOf(wallet: WalletRow) {
  return decodePublicPackage(JSON.parse(wallet.public_package));
}

function reportJson(r: HelperReport) {
  return { sigma: bytesToHex(r.sigma), kept: bytesToHex(r.kept), sent: bytesToHex(r.sent), received: bytesToHex(r.received) };
}

export async function startEnrollment(services: Services, ownerId: string, walletId: string) {
  const wallet = await requireOwnerWallet(services, ownerId, walletId);
  // A kit co-signs a sweep of the whole balance: once the owner has a passkey, the API starts one only under a grant it signed on the dashboard.
  const grant = await apiGrant(services, ownerId, { kind: 'recovery.enroll', owner_id: ownerId, wallet_id: walletId });
  const now = services.now().getTime();
  const enrollmentId = newId('recoveryEnrollment');
  await services.db
    .transaction(async () => {
      await insertEnrollment(services.db, { enrollment_id: enrollmentId, wallet_id: walletId, owner_id: ownerId, now, expires_at: now + ENROLLMENT_TTL_MS });
      await appendAudit(services.db, { walletId, actor: ownerActor(ownerId, 'api'), kind: 'recovery.enrollment_started', data: { enrollment_id: enrollmentId, ...(grant ? { passkey: grant.evidence } : {}) }, now });
      await grant?.take();
    });
  return {
    enrollment_id: enrollmentId,
    wallet_id: walletId,
    address: wallet.address,
    expires_at: iso(now + ENROLLMENT_TTL_MS),
    next_step: "Your CLI puts this id and a key it made on your machine into the enrollment code; hand the code to the agent's machine yourself (never through this service), where agent-wallet recovery enroll CODE runs the agent's half.",
  };
}

/** The agent's piece in, the daemon's piece out; the daemon's report for the owner kept sealed. */
export async function splitEnrollment(services: Services, wallet: WalletRow, enrollmentId: string, pieceHex: string) {
  await liveEnrollment(services, enrollmentId, (r) => r.wallet_id === wallet.wallet_id, ['open']);
  const split = repairSplit(walletKeyPackage(services.masterKey, wallet.wallet_id, wallet.server_key));
  let report: HelperReport;
  try {
    report = repairSum(split, hexToBytes(pieceHex), 'agent');
  } catch (err) {
    if (err instanceof RepairError) throw new AppError('VALIDATION_ERROR', `piece: ${err.message}`, { howToFix: 'Send a fresh random non-zero scalar below the group order; the agent-wallet client does this.' });
    throw err;
  }
  const sealed = seal(services.masterKey, new TextEncoder().encode(JSON.stringify(reportJson(report))), reportAad(enrollmentId));
  const now = services.now().getTime();
  const moved = await services.db.transaction(async () => await moveEnrollment(services.db, enrollmentId, ['open'], 'split', now, { daemon_report: sealed }));
  if (!moved) throw new AppError('INVALID_STATUS', 'This enrollment already ran its split.', { howToFix: 'Ask the owner for a new enrollment code.' });
  return { enrollment_id: enrollmentId, piece: bytesToHex(split.forOther), next_step: "seal your report to the owner's key from the code and send it with recovery_enroll_deliver" };
}

/** The agent's box for the owner; the same box again is a no-op. */
export async function deliverEnrollment(services: Services, wallet: WalletRow, enrollmentId: string, boxBase64: string) {
  const row = await liveEnrollment(services, enrollmentId, (r) => r.wallet_id === wallet.wallet_id, ['split', 'delivered']);
  const box = new Uint8Array(Buffer.from(boxBase64, 'base64'));
  if (row.status === 'delivered') {
    if (row.agent_box && Buffer.compare(Buffer.from(row.agent_box), Buffer.from(box)) === 0) return { enrollment_id: enrollmentId, status: 'delivered' };
    throw new AppError('INVALID_STATUS', "This enrollment already has the agent's report.", { howToFix: 'Ask the owner for a new enrollment code to enroll again.' });
  }
  const now = services.now().getTime();
  await services.db
    .transaction(async () => {
      await moveEnrollment(services.db, enrollmentId, ['split'], 'delivered', now, { agent_box: box });
      await appendEvent(services.db, { walletId: wallet.wallet_id, type: 'recovery.enrollment_delivered', data: { enrollment_id: enrollmentId }, now });
    });
  return { enrollment_id: enrollmentId, status: 'delivered', next_step: 'The owner finishes with agent-wallet owner recovery finish on their machine.' };
}

export async function collectEnrollment(services: Services, ownerId: string, enrollmentId: string) {
  const row = await liveEnrollment(services, enrollmentId, async (r) => r.owner_id === ownerId && (await ownerWallet(services.db, ownerId, r.wallet_id)) !== null, ['delivered']);
  const wallet = await requireOwnerWallet(services, ownerId, row.wallet_id);
  const report = JSON.parse(new TextDecoder().decode(open(services.masterKey, row.daemon_report!, reportAad(enrollmentId)))) as Awaited<ReturnType<typeof reportJson>>;
  const pub = publicPackageOf(wallet);
  return {
    enrollment_id: enrollmentId,
    wallet_id: wallet.wallet_id,
    address: wallet.address,
    commitments: pub.commitments.map((c) => bytesToHex(c)),
    agent_box: Buffer.from(row.agent_box!).toString('base64'),
    daemon_report: report,
  };
}

export async function finishEnrollment(services: Services, ownerId: string, enrollmentId: string, fingerprint: string) {
  const row = await liveEnrollment(services, enrollmentId, async (r) => r.owner_id === ownerId && (await ownerWallet(services.db, ownerId, r.wallet_id)) !== null, ['delivered']);
  const wallet = await requireOwnerWallet(services, ownerId, row.wallet_id);
  const expected = recoveryFingerprint(wallet.wallet_id, publicPackageOf(wallet));
  if (fingerprint !== expected) {
    throw new AppError('VALIDATION_ERROR', "fingerprint: not this wallet's key (a kit made from other reports, or for another wallet)", { howToFix: 'Collect and combine again with agent-wallet owner recovery finish; do not keep a kit whose fingerprint differs.' });
  }
  const now = services.now().getTime();
  await services.db
    .transaction(async () => {
      const previous = await currentEnrollment(services.db, wallet.wallet_id);
      if (previous) await moveEnrollment(services.db, previous.enrollment_id, ['enrolled'], 'superseded', now);
      await moveEnrollment(services.db, enrollmentId, ['delivered'], 'enrolled', now, { daemon_report: null, agent_box: null, fingerprint, enrolled_at: now });
      await appendAudit(services.db, { walletId: wallet.wallet_id, actor: ownerActor(ownerId, 'api'), kind: 'recovery.enrolled', data: { enrollment_id: enrollmentId, fingerprint }, now });
      await appendEvent(services.db, { walletId: wallet.wallet_id, type: 'recovery.enrolled', data: { enrollment_id: enrollmentId, fingerprint }, now });
    });
  return { enrollment_id: enrollmentId, wallet_id: wallet.wallet_id, status: 'enrolled', fingerprint, enrolled_at: iso(now) };
}

/** What the owner (API and dashboard) sees of a wallet's recovery: never the kit. */
export async function recoveryStatus(services: Services, ownerId: string, walletId: string) {
  await requireOwnerWallet(services, ownerId, walletId);
  const enrolled = await currentEnrollment(services.db, walletId);
  const progress = await enrollmentInProgress(services.db, walletId);
  return {
    wallet_id: walletId,
    enrolled: enrolled !== null,
    fingerprint: enrolled?.fingerprint ?? null,
    enrolled_at: iso(enrolled?.enrolled_at ?? null),
    in_progress: progress ? { enrollment_id: progress.enrollment_id, status: progress.status, expires_at: iso(progress.expires_at) } : null,
  };
}

export const ownerRecoveryActions = implement(OWNER_RECOVERY, {
  recovery_enroll_start: async (ctx, p) => await startEnrollment(ctx.services, callerOwner(ctx).ownerId, p.wallet_id),
  recovery_enroll_collect: async (ctx, p) => await collectEnrollment(ctx.services, callerOwner(ctx).ownerId, p.enrollment_id),
  recovery_enroll_finish: async (ctx, p) => await finishEnrollment(ctx.services, callerOwner(ctx).ownerId, p.enrollment_id, p.fingerprint),
  recovery_status: async (ctx, p) => await recoveryStatus(ctx.services, callerOwner(ctx).ownerId, p.wallet_id),
});

export const agentRecoveryActions = implement(AGENT_RECOVERY, {
  recovery_enroll_split: async (ctx, p) => await splitEnrollment(ctx.services, await callerWallet(ctx), p.enrollment_id, p.piece),
  recovery_enroll_deliver: async (ctx, p) => await deliverEnrollment(ctx.services, await callerWallet(ctx), p.enrollment_id, p.box),
});
