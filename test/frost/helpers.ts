/** Builders for FROST tests: an HTTP-like hop and a completed agent↔server DKG. */
import { AGENT_ID, dkgRound1, dkgRound2, dkgRound3, SERVER_ID } from '../../src/frost/index.ts';

/** What crossing HTTP does to a value: JSON text out, JSON text in. */
export function overHttp(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** A 2-of-2 DKG run in memory (no wire), for tests that start from finished keys. */
export function dkgPair() {
  const agent1 = dkgRound1(AGENT_ID);
  const server1 = dkgRound1(SERVER_ID);
  const toServer = dkgRound2(agent1.state, server1.pkg).forOther;
  const toAgent = dkgRound2(server1.state, agent1.pkg).forOther;
  const agent = dkgRound3(agent1.state, server1.pkg, toAgent);
  const server = dkgRound3(server1.state, agent1.pkg, toServer);
  return { agent, server };
}

/** A Solana-like legacy message: header, account keys, blockhash, one instruction (bytes only). */
export function solanaLikeMessage(seed = 7): Uint8Array {
  const bytes = new Uint8Array(1 + 2 + 1 + 3 * 32 + 32 + 1 + 1 + 1 + 2 + 1 + 9);
  bytes.set([1, 0, 1, 3]);
  for (let i = 4; i < bytes.length; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}
