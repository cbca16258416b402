/** The FROST worker pool: both rounds computed on a worker thread, refusals as results, failures as rejections. */
import { afterAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { AAD } from '../../src/frost/aad.ts';
import { encodeSecretState } from '../../src/frost/codec.ts';
import { commitmentList } from '../../src/frost/commitments.ts';
import { AGENT_ID, SERVER_ID } from '../../src/frost/ids.ts';
import { ed25519Verifies } from '../../src/frost/native-ed25519.ts';
import { commit, signShare } from '../../src/frost/party.ts';
import { FrostPool } from '../../src/frost/pool.ts';
import { BACKGROUND_NICE } from '../../src/thread-priority.ts';
import { seal } from '../../src/frost/seal.ts';
import { decodeCommitments, encodeCommitments } from '../../src/frost/wire.ts';
import { dkgPair, overHttp, solanaLikeMessage } from './helpers.ts';

const pool = new FrostPool(2);
afterAll(() => pool.close());

const { agent, server } = dkgPair();
const masterKey = new Uint8Array(randomBytes(32));
const walletId = 'wal_pooltest';
const serverKey = seal(masterKey, encodeSecretState(server.keyPackage.reveal()), AAD.walletKey(walletId));

/** Round one on the pool for a fresh agent round; returns what round two needs. */
async function roundOne(sessionId: string) {
  const own = commit(agent.keyPackage);
  const round = await pool.run({ kind: 'round', masterKey, walletId, serverKey, sessionId, agent: overHttp(encodeCommitments(own.commitments)) }, walletId);
  if (!round.ok) throw new Error(round.message);
  return { own, round };
}

describe('FrostPool', () => {
  test('round one and round two on workers give a signature that verifies under the wallet key', async () => {
    const message = solanaLikeMessage(3);
    const { own, round } = await roundOne('ses_a');
    const list = commitmentList(own.commitments, decodeCommitments(round.server, SERVER_ID));
    const agentShare = signShare(agent.keyPackage, own.nonces, list, message);
    const job = {
      kind: 'sign' as const,
      masterKey,
      walletId,
      serverKey,
      sessionId: 'ses_a',
      sealedNonces: round.sealedNonces,
      agentCommitments: JSON.stringify(round.agent),
      serverCommitments: JSON.stringify(round.server),
      message,
      agentShare,
      groupKey: agent.groupKey,
    };
    const signed = await pool.run(job, walletId);
    expect(signed.ok).toBe(true);
    if (!signed.ok) return;
    expect(ed25519Verifies(signed.signature, message, agent.groupKey)).toBe(true);
    // The same session computed again (a concurrent retry, a crash before the store): the same signature.
    const again = await pool.run(job, walletId);
    expect(again).toEqual(signed);
    // A wallet whose address is not this key's gets no signature, though the shares combine.
    const otherAddress = Uint8Array.from(agent.groupKey);
    otherAddress[0]! ^= 1;
    expect(await pool.run({ ...job, groupKey: otherAddress }, walletId)).toEqual({ ok: false, reason: 'verify' });
    // Another message with these nonces is refused as the agent's fault; nothing verifies.
    const refused = await pool.run({ ...job, message: solanaLikeMessage(4) }, walletId);
    expect(refused).toEqual({ ok: false, reason: 'share', message: 'the agent share does not verify for this message and these commitments' });
    expect(pool.jobs).toBeGreaterThanOrEqual(4);
  });

  test("malformed agent commitments are a refusal naming the field, not an exception", async () => {
    const own = encodeCommitments(commit(agent.keyPackage).commitments);
    const round = await pool.run({ kind: 'round', masterKey, walletId, serverKey, sessionId: 'ses_b', agent: { ...own, binding: '00'.repeat(32) } }, walletId);
    expect(round).toEqual({ ok: false, field: '/commitments/binding', message: 'is not in the prime-order subgroup' });
    const server = await pool.run({ kind: 'round', masterKey, walletId, serverKey, sessionId: 'ses_b', agent: { ...own, identifier: SERVER_ID } }, walletId);
    expect(server.ok).toBe(false);
  });

  test('a job that throws (nonces sealed for another session) rejects with its message; the next job is served', async () => {
    const { own, round } = await roundOne('ses_c');
    const message = solanaLikeMessage(5);
    const list = commitmentList(own.commitments, decodeCommitments(round.server, SERVER_ID));
    const job = {
      kind: 'sign' as const,
      masterKey,
      walletId,
      serverKey,
      sessionId: 'ses_other',
      sealedNonces: round.sealedNonces,
      agentCommitments: JSON.stringify(round.agent),
      serverCommitments: JSON.stringify(round.server),
      message,
      agentShare: signShare(agent.keyPackage, own.nonces, list, message),
      groupKey: agent.groupKey,
    };
    // Awaited with catch: bun's expect().rejects does not let the worker's answer in.
    const failed = await pool.run(job, walletId).then(() => null, (err: Error) => err);
    expect(failed?.message).toContain('cannot open sealed data');
    expect((await pool.run({ ...job, sessionId: 'ses_c' }, walletId)).ok).toBe(true);
  });

  test.if(process.platform === 'linux')('its workers run below the event loop: nice 10 on the worker threads, 0 on the main thread', async () => {
    await roundOne('ses_nice');
    const niceOf = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const threads = readdirSync('/proc/self/task');
    expect(niceOf(String(process.pid))).toBe(0);
    expect(threads.filter((tid) => niceOf(tid) === BACKGROUND_NICE).length).toBeGreaterThanOrEqual(1);
  });

  test('closing the pool refuses the jobs in flight', async () => {
    const own = commit(agent.keyPackage);
    const closing = new FrostPool(1);
    const inFlight = closing.run({ kind: 'round', masterKey, walletId, serverKey, sessionId: 'ses_d', agent: encodeCommitments(own.commitments) }, walletId);
    closing.close();
    expect(await inFlight.then(() => null, (err: Error) => err.message)).toBe('the FROST worker pool was closed');
  });
});
