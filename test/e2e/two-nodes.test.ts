/**
 * Two daemons on one PostgreSQL ledger (DESIGN §10.2): they share the database, the config,
 * master.key and the fee payer, nothing else. 16 agents, half registered through each node, pay
 * one another at once; each payment's signing round is opened on one node and completed on the
 * other. Every payment completes exactly once and each account's ledger equals the chain. A node
 * with another master.key is refused.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { registerWallet } from '../../src/client/register.ts';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import type { ProfileData } from '../../src/client/profile.ts';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { claimInLedger, customChainEnv, MAIN, startDaemonProcess, type DaemonProcess } from '../helpers/daemon.ts';
import { emptyPgDatabase } from '../helpers/ledger.ts';
import { pgServerForFile, type PgCluster } from '../helpers/pg.ts';
import { tempDir } from '../helpers/services.ts';

const AGENTS = 16;
let simnet: Simnet;
let server: string;
let cluster: PgCluster | null = null;
const nodes: DaemonProcess[] = [];
const root = tempDir('aw-nodes-');
const dirA = join(root, 'a');
const dirB = join(root, 'b');

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 100 });
  ({ url: server, cluster } = await pgServerForFile('the two-node test', 'fail'));
});
afterAll(async () => {
  for (const n of nodes) await n.stop();
  await simnet.stop();
  await cluster?.stop();
});


test('two nodes on one PostgreSQL: 16 agents split across them, rounds opened on one node and completed on the other, each payment once, ledger = chain', async () => {
  const url = await emptyPgDatabase(server);
  for (const dir of [dirA, dirB]) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'config.toml'), `[database]\nurl = "${url}"\npool_size = 4\n`, { mode: 0o600 });
  }
  const env = customChainEnv(simnet.url);
  const a = await startDaemonProcess({ dataDir: dirA, env });
  nodes.push(a);
  // The second node gets the first one's secrets: the same master.key and fee payer.
  for (const file of ['master.key', 'fee-payer.json']) copyFileSync(join(dirA, file), join(dirB, file));
  const b = await startDaemonProcess({ dataDir: dirB, env });
  nodes.push(b);
  expect(b.started.fee_payer).toBe(a.started.fee_payer);
  await simnet.airdrop(a.started.fee_payer as Address, 50_000_000_000n);
  await simnet.faucet(a.started.fee_payer as Address, 0n);

  const urls = [a.url, b.url];
  const agents: ProfileData[] = [];
  for (let i = 0; i < AGENTS; i++) agents.push((await registerWallet(new ApiClient(urls[i % 2]!), { name: `Node agent ${i}` })).profile);
  await claimInLedger(dirA, agents.map((p) => p.wallet_id));
  for (const p of agents) await simnet.faucet(p.address as Address, 20_000_000n);
  const chain = createRpcChainPort(simnet.url);
  const before = await Promise.all(agents.map((p) => chain.getTokenBalance(p.address as Address, simnet.mint)));

  // Each agent pays the next one twice: the intent through one node, the signing through the other.
  const results = await Promise.all(
    agents.map(async (p, i) => {
      const out: string[] = [];
      for (let k = 0; k < 2; k++) {
        const intentNode = new ApiClient(urls[(i + k) % 2]!, p.api_key);
        const signNode = new ApiClient(urls[(i + k + 1) % 2]!, p.api_key);
        const intent = await intentNode.call<{ transaction_id: string }>('bot', 'pay', { to: agents[(i + 1) % AGENTS]!.username, amount: '1' });
        const done = await confirmSignSubmit(signNode, p, intent.transaction_id);
        out.push(String(done.status));
      }
      return out;
    }),
  );
  expect(results.flat()).toEqual(Array(AGENTS * 2).fill('completed'));

  // Each account on chain moved by exactly two payments out (1 + 0.01 fee each) and two in.
  const after = await Promise.all(agents.map((p) => chain.getTokenBalance(p.address as Address, simnet.mint)));
  agents.forEach((_, i) => expect(after[i]! - before[i]!).toBe(-20_000n));
  // Either node answers the same ledger, equal to the chain.
  for (const [i, p] of agents.entries()) {
    for (const node of urls) {
      const balance = await new ApiClient(node, p.api_key).call<{ balance: number }>('bot', 'balance', {});
      expect(BigInt(Math.round(balance.balance * 1e6))).toBe(after[i]!);
    }
    const sent = await new ApiClient(urls[i % 2]!, p.api_key).call<{ items: { status: string }[] }>('bot', 'list_payments', { limit: 10 });
    expect(sent.items.filter((t) => t.status === 'completed')).toHaveLength(2);
  }

  // A third node with its own master.key is refused: it could open none of the ledger's key shares.
  const dirC = join(root, 'c');
  mkdirSync(dirC, { recursive: true, mode: 0o700 });
  writeFileSync(join(dirC, 'config.toml'), `[database]\nurl = "${url}"\n`, { mode: 0o600 });
  // Bounded: a node not refused would serve on, past the test.
  const stranger = Bun.spawn([process.execPath, MAIN, 'serve', '--data-dir', dirC, '--port', '0'], { env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'pipe', timeout: 30_000 });
  const [stderr, code] = await Promise.all([new Response(stranger.stderr).text(), stranger.exited]);
  expect(code).toBe(1);
  expect(stderr).toContain('was created with another master.key');
}, 180_000);
