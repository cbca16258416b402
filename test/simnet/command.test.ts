import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { rawRpc, until } from './helpers.ts';
import { MAIN } from '../helpers/daemon.ts';


function simnetProcess(flags: string[]): Subprocess<'ignore', 'pipe', 'pipe'> {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'simnet-cli-')), 'data');
  return Bun.spawn([process.execPath, MAIN, 'simnet', '--port', '0', '--data-dir', dataDir, '--slot-ms', '50', ...flags], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
}

function call(method: string, params: unknown[] = []) {
  return { jsonrpc: '2.0', id: 1, method, params };
}

describe('agent-wallet simnet with provider fault flags', () => {
  let proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  let started: { rpc_url: string; faults: Record<string, unknown> };

  beforeAll(async () => {
    proc = simnetProcess(['--congestion-floor', '1000', '--rate-limit', '5']);
    let out = '';
    const decoder = new TextDecoder();
    void (async () => {
      for await (const chunk of proc.stdout) out += decoder.decode(chunk);
    })();
    started = await until(
      () => {
        if (proc.exitCode !== null) throw new Error(`simnet exited with ${proc.exitCode}`);
        const line = out.split('\n').find((l) => l.includes('"simnet started"') && l.endsWith('}'));
        return line === undefined ? undefined : JSON.parse(line);
      },
      30_000,
      'the start line',
    );
  });

  afterAll(async () => {
    if (proc.exitCode === null) proc.kill('SIGTERM');
    await proc.exited;
  });

  it('says which faults are on in its start line', () => {
    expect(started.faults).toEqual({ congestion_floor: 1000, rate_limit_rps: 5, rate_limit_retry_after: true });
    expect(started.rpc_url).toStartWith('http://127.0.0.1:');
  });

  it('rate-limits, reports its counters and switches faults over the loopback control methods, then stops on SIGTERM', async () => {
    const url = started.rpc_url;
    await rawRpc(url, call('simnet_resetStats'));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await rawRpc(url, call('getSlot'))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await rawRpc(url, call('simnet_stats'))).json.result).toEqual({ calls: { getSlot: 5 }, total: 5, httpRequests: 6, rateLimited: 1, dropped: 0 });

    const cleared = await rawRpc(url, call('simnet_setFaults', [{ rate_limit_rps: null, status_lag_slots: 2 }]));
    expect(cleared.json.result).toEqual({ congestion_floor: 1000, rate_limit_rps: null, rate_limit_retry_after: null, status_lag_slots: 2, mode: null });
    const fees = (await rawRpc(url, call('getRecentPrioritizationFees'))).json.result as { prioritizationFee: number }[];
    expect(fees.length).toBeGreaterThan(0);
    expect(fees.every((f) => f.prioritizationFee >= 1000)).toBe(true);

    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  });
});

describe('agent-wallet simnet flag validation', () => {
  for (const flags of [['--rate-limit', '0'], ['--congestion-floor', 'abc'], ['--status-lag-slots', '1.5'], ['--no-retry-after']]) {
    it(`exits 2 (usage) on ${flags.join(' ')}`, async () => {
      const proc = simnetProcess(flags);
      expect(await proc.exited).toBe(2);
      expect(await new Response(proc.stderr).text()).toContain(flags[0]!);
    });
  }
});
