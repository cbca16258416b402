/**
 * `merchant gate` on a local setup (issue 43): at start the gate says what will stop it selling —
 * a payout address without a USDC token account (and how to create it), and a daemon that refuses
 * to contact the gate's loopback address (and the setting: outbound.allow_hosts) — and runs anyway.
 * Against an in-process daemon and simnet; the real CLI prints the same lines on stderr.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { ApiClient } from '../../src/client/api.ts';
import { parseRoute } from '../../src/domain/paywall-routes.ts';
import { localSetupWarnings, startPaywall } from '../../src/x402/paywall.ts';
import { MAIN, runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';
import { startWorld, type World } from '../helpers/world.ts';
import { join } from 'node:path';

let refusing: World;
let allowing: World;
const route = (text: string) => {
  const r = parseRoute(text);
  if (!r.ok) throw new Error(r.reason);
  return r.route;
};

async function merchant(world: World, username: string) {
  const payout = (await generateKeyPairSigner()).address;
  const reg = await new ApiClient(world.url).call<{ api_key: string; merchant_id: string }>('merchant', 'register', { name: 'Local Shop', username, payout_address: payout });
  return { payout, key: reg.api_key, merchantId: reg.merchant_id };
}

beforeAll(async () => {
  [refusing, allowing] = await Promise.all([startWorld(), startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } })]);
});
afterAll(async () => {
  await Promise.all([refusing?.stop(), allowing?.stop()]);
});

describe('merchant gate warnings at start', () => {
  test('a daemon that refuses loopback addresses: the gate warns naming outbound.allow_hosts, runs, and the probe creates no merchant', async () => {
    const m = await merchant(refusing, 'local-shop');
    const before = await refusing.services.db.get<{ n: bigint }>('SELECT count(*) AS n FROM merchants');
    const gate = await startPaywall({ server: refusing.url, merchantKey: m.key, upstream: 'http://127.0.0.1:9', routes: [route('GET /api/*=0.01')], hostname: '127.0.0.1', port: 0, journal: ':memory:', log: () => {} });
    try {
      expect(gate.warnings).toHaveLength(1);
      expect(gate.warnings[0]).toContain(gate.url);
      expect(gate.warnings[0]).toContain('outbound.allow_hosts');
      expect(gate.warnings[0]).toContain('AGENT_WALLET_OUTBOUND_ALLOW_HOSTS=127.0.0.1');
      expect((await fetch(`${gate.url}/api/x`)).status).toBe(402);
      const after = await refusing.services.db.get<{ n: bigint }>('SELECT count(*) AS n FROM merchants');
      expect(after?.n).toBe(before?.n);
    } finally {
      await gate.stop();
    }
  });

  test('a daemon with 127.0.0.1 in outbound.allow_hosts: no loopback warning', async () => {
    const m = await merchant(allowing, 'allowed-shop');
    const gate = await startPaywall({ server: allowing.url, merchantKey: m.key, upstream: 'http://127.0.0.1:9', routes: [route('GET /api/*=0.01')], hostname: '127.0.0.1', port: 0, journal: ':memory:', log: () => {} });
    try {
      expect(gate.warnings).toEqual([]);
    } finally {
      await gate.stop();
    }
  });

  test('a payout address without a USDC token account on the embedded chain: warned with how to create it; none once it exists', async () => {
    const payout = (await generateKeyPairSigner()).address as Address;
    const terms = { payTo: payout, asset: allowing.simnet.mint, username: 'allowed-shop', rpcUrl: allowing.simnet.url };
    const missing = await localSetupWarnings(allowing.url, terms, 'http://1.1.1.1:8402');
    expect(missing).toHaveLength(1);
    expect(missing[0]).toContain(`has no USDC token account`);
    expect(missing[0]).toContain(`agent-wallet admin faucet ${payout} 0.01`);
    await allowing.fund(payout, 0n);
    expect(await localSetupWarnings(allowing.url, terms, 'http://1.1.1.1:8402')).toEqual([]);
  });

  test('the CLI prints each warning on stderr after the start line, and in --json under warnings', async () => {
    const home = join(tempDir('aw-gate-warn-'), 'home');
    const payout = (await generateKeyPairSigner()).address;
    const reg = await runCli(['merchant', 'register', '--name', 'Cli Shop', '--username', 'cli-shop', '--payout-address', payout, '--server', refusing.url, '--home', home, '--json']);
    expect(reg.code).toBe(0);
    const proc = Bun.spawn([process.execPath, MAIN, 'merchant', 'gate', '--upstream', 'http://127.0.0.1:9', '--route', 'GET /api/*=0.01', '--port', '0', '--home', home, '--server', refusing.url, '--json'], {
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, NO_COLOR: '1' },
    });
    let out = '';
    let err = '';
    const dec = new TextDecoder();
    void (async () => {
      for await (const c of proc.stdout) out += dec.decode(c);
    })();
    void (async () => {
      for await (const c of proc.stderr) err += dec.decode(c);
    })();
    const deadline = Date.now() + 20_000;
    while (!err.includes('warning:') && proc.exitCode === null && Date.now() < deadline) await Bun.sleep(20);
    proc.kill('SIGTERM');
    await proc.exited;
    expect(err).toContain('warning: the daemon refuses to contact http://127.0.0.1:');
    expect(err).toContain('outbound.allow_hosts');
    const started = JSON.parse(out);
    expect(started.warnings).toHaveLength(1);
  });
});
