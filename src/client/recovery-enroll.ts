/**
 * Enrolling the owner's recovery share, client side (DESIGN §4.1). Two machines run it:
 *
 * - the owner's: `ownerStartEnrollment` asks the daemon for an enrollment id, makes an X25519 key
 *   pair on this machine and keeps its secret in a 0600 file under the profile home; the code it
 *   prints (wallet id, enrollment id, public key) goes to the agent's machine out of band.
 *   `ownerFinishEnrollment` collects both reports, opens the agent's box, checks everything against
 *   the key's public commitment and the address, and writes the passphrase-sealed kit.
 * - the agent's: `agentEnroll` runs the agent's half with that code and seals its report to the
 *   owner's key, so the daemon that relays it can neither read nor forge it.
 *
 * The daemon may lie; every value it hands over is checked where it is used, and a failure names
 * the side that is wrong.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { getBase58Encoder } from '@solana/kit';
import type { ApiClient } from './api.ts';
import type { ProfileData } from './profile.ts';
import { kitPublicPackage, makeKit, writeKit } from './recovery-kit.ts';
import { decodeSecretState } from '../frost/codec.ts';
import { SealError } from '../frost/errors.ts';
import { enrollmentKeyPair, formatEnrollmentCode, openAsOwner, parseEnrollmentCode, sealToOwner } from '../frost/recovery-box.ts';
import { RepairError, repairCombine, repairSplit, repairSum, type HelperReport } from '../frost/recovery-share.ts';
import { Secret } from '../frost/secret.ts';
import type { KeyPackage } from '../frost/types.ts';

const HEX32 = /^[0-9a-f]{64}$/;

/** What the agent seals to the owner: its report and its own view of the key. */
interface AgentBoxContent {
  wallet_id: string;
  enrollment_id: string;
  address: string;
  commitments: [string, string];
  report: { sigma: string; kept: string; sent: string; received: string };
}

function hex32(value: unknown, what: string, culprit: 'agent' | 'daemon'): Uint8Array {
  if (typeof value !== 'string' || !HEX32.test(value)) throw new RepairError(culprit, `${what} is not 32 bytes of lowercase hex`);
  return hexToBytes(value);
}

function reportOf(json: unknown, who: 'agent' | 'daemon'): HelperReport {
  const r = (json ?? {}) as Record<string, unknown>;
  return {
    sigma: hex32(r.sigma, `the ${who}'s sum`, who),
    kept: hex32(r.kept, `the ${who}'s kept point`, who),
    sent: hex32(r.sent, `the ${who}'s sent point`, who),
    received: hex32(r.received, `the ${who}'s received point`, who),
  };
}

const reportJson = (r: HelperReport) => ({ sigma: bytesToHex(r.sigma), kept: bytesToHex(r.kept), sent: bytesToHex(r.sent), received: bytesToHex(r.received) });

/** The agent's half: split, exchange pieces with the daemon, seal the report to the owner's key. */
export async function agentEnroll(api: ApiClient, profile: ProfileData, code: string): Promise<{ enrollment_id: string; status: string }> {
  const c = parseEnrollmentCode(code);
  if (c.walletId !== profile.wallet_id) throw new RepairError('key', `this enrollment code is for wallet ${c.walletId}, not this profile's ${profile.wallet_id}`);
  const key = new Secret(decodeSecretState(Buffer.from(profile.key_package, 'base64')) as KeyPackage);
  const split = repairSplit(key);
  const answer = await api.call<{ piece: unknown }>('bot', 'recovery_enroll_split', { enrollment_id: c.enrollmentId, piece: bytesToHex(split.forOther) });
  const report = repairSum(split, hex32(answer.piece, "the daemon's piece", 'daemon'), 'daemon');
  const pub = key.reveal().public;
  const content: AgentBoxContent = {
    wallet_id: profile.wallet_id,
    enrollment_id: c.enrollmentId,
    address: profile.address,
    commitments: [bytesToHex(pub.commitments[0]!), bytesToHex(pub.commitments[1]!)],
    report: reportJson(report),
  };
  const box = sealToOwner(c.ownerPublicKey, c.walletId, c.enrollmentId, new TextEncoder().encode(JSON.stringify(content)));
  const done = await api.call<{ status: string }>('bot', 'recovery_enroll_deliver', { enrollment_id: c.enrollmentId, box: Buffer.from(box).toString('base64') });
  return { enrollment_id: c.enrollmentId, status: done.status };
}

/** The owner's enrollment secrets between start and finish: one 0600 file per enrollment under `<home>/owner-enrollments`. */
export class OwnerEnrollmentStore {
  constructor(readonly home: string) {}

  private path(enrollmentId: string): string {
    if (!/^rce_[0-9a-z]+$/.test(enrollmentId)) throw new RepairError('key', `${enrollmentId} is not an enrollment id`);
    return join(this.home, 'owner-enrollments', `${enrollmentId}.json`);
  }

  save(enrollmentId: string, state: { wallet_id: string; address: string; secret_key: string }): void {
    const dir = join(this.home, 'owner-enrollments');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = this.path(enrollmentId);
    const tmp = `${path}.tmp-${process.pid}`;
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, JSON.stringify(state));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  }

  load(enrollmentId: string): { wallet_id: string; address: string; secret_key: Uint8Array } {
    const path = this.path(enrollmentId);
    if (!existsSync(path)) throw new RepairError('key', `no enrollment ${enrollmentId} was started on this machine (looked in ${path}); start one with agent-wallet owner recovery start`);
    const s = JSON.parse(readFileSync(path, 'utf8')) as { wallet_id: string; address: string; secret_key: string };
    return { ...s, secret_key: hexToBytes(s.secret_key) };
  }

  remove(enrollmentId: string): void {
    rmSync(this.path(enrollmentId), { force: true });
  }
}

/** The owner starts: an enrollment at the daemon, a key pair here, and the code for the agent. */
export async function ownerStartEnrollment(api: ApiClient, store: OwnerEnrollmentStore, walletId: string) {
  const started = await api.call<{ enrollment_id: string; address: string; expires_at: string }>('owner', 'recovery_enroll_start', { wallet_id: walletId });
  const { secretKey, publicKey } = enrollmentKeyPair();
  store.save(started.enrollment_id, { wallet_id: walletId, address: started.address, secret_key: bytesToHex(secretKey) });
  secretKey.fill(0);
  return { enrollment_id: started.enrollment_id, wallet_id: walletId, address: started.address, expires_at: started.expires_at, code: formatEnrollmentCode({ walletId, enrollmentId: started.enrollment_id, ownerPublicKey: publicKey }) };
}

/**
 * The owner finishes: both reports checked and combined into f(3), verified against verifying
 * share 3 of the key whose group key is the wallet's address, sealed into the kit at `out`.
 */
export async function ownerFinishEnrollment(api: ApiClient, store: OwnerEnrollmentStore, enrollmentId: string, opts: { passphrase: string; out: string; now?: Date }) {
  const state = store.load(enrollmentId);
  const collected = await api.call<{ wallet_id: string; address: string; commitments: unknown; agent_box: string; daemon_report: unknown }>('owner', 'recovery_enroll_collect', { enrollment_id: enrollmentId });
  if (collected.wallet_id !== state.wallet_id || collected.address !== state.address) throw new RepairError('daemon', 'the daemon answered for another wallet than the one this enrollment was started for');
  let content: AgentBoxContent;
  try {
    content = JSON.parse(new TextDecoder().decode(openAsOwner(state.secret_key, state.wallet_id, enrollmentId, new Uint8Array(Buffer.from(collected.agent_box, 'base64'))))) as AgentBoxContent;
  } catch (err) {
    if (err instanceof SealError || err instanceof SyntaxError) throw new RepairError('agent', "the agent's report does not open with this enrollment's key: it was sealed for another enrollment or wallet, or changed on the way");
    throw err;
  }
  if (content.wallet_id !== state.wallet_id || content.enrollment_id !== enrollmentId || content.address !== state.address) throw new RepairError('agent', "the agent's report is for another wallet or enrollment");
  const theirs = collected.commitments as unknown[];
  if (!Array.isArray(theirs) || theirs.length !== 2 || theirs.some((c, i) => c !== content.commitments?.[i])) throw new RepairError('daemon', "the daemon's key commitment differs from the agent's");
  for (const [i, c] of content.commitments.entries()) hex32(c, `the agent's commitment ${i}`, 'agent');
  const pub = kitPublicPackage(content);
  if (bytesToHex(pub.commitments[0]!) !== bytesToHex(new Uint8Array(getBase58Encoder().encode(state.address)))) throw new RepairError('key', "the key's group key is not the wallet's address");
  const share = repairCombine(pub, reportOf(content.report, 'agent'), reportOf(collected.daemon_report, 'daemon'));
  const kit = makeKit({ walletId: state.wallet_id, address: state.address, pub, share, passphrase: opts.passphrase, now: opts.now ?? new Date() });
  writeKit(opts.out, kit);
  const finished = await api.call<{ fingerprint: string; enrolled_at: string }>('owner', 'recovery_enroll_finish', { enrollment_id: enrollmentId, fingerprint: kit.fingerprint });
  store.remove(enrollmentId);
  return { enrollment_id: enrollmentId, wallet_id: state.wallet_id, address: state.address, fingerprint: kit.fingerprint, kit: opts.out, enrolled_at: finished.enrolled_at };
}
