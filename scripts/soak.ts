/**
 * `npm run soak` (not in CI): payments end to end for SOAK_SECONDS (default 600) at half the rate
 * the bench measured (SOAK_RATE payments/s, default 9: half of the ~18/s end to end), sampling the server's resident memory.
 * Prints the RSS drift of the app process between the first and the last minute; the goal is < 10 %.
 */
import { readFileSync } from 'node:fs';
import { ApiClient } from '../src/client/api.ts';
import type { ProfileData } from '../src/client/profile.ts';
import { confirmSignSubmit } from '../src/client/sign.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RATE = Number(process.env.SOAK_RATE ?? 9);
const SERVERS = new URL('./bench-servers.ts', import.meta.url).pathname;

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

/**
 * The chain runs in its own process (`agent-wallet simnet`), so the RSS sampled is the app's alone:
 * a daemon on devnet or mainnet has no embedded chain.
 */
const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const chainDir = (await import('node:fs')).mkdtempSync(`${(await import('node:os')).tmpdir()}/aw-soak-chain-`);
const chain = Bun.spawn([process.execPath, MAIN, 'simnet', '--port', '0', '--data-dir', chainDir], { stdout: 'pipe', stderr: 'inherit' });
const chainReader = chain.stdout.getReader();
let chainOut = '';
while (!chainOut.includes('\n')) {
  const { value, done } = await chainReader.read();
  if (done) throw new Error(`simnet exited: ${chainOut}`);
  chainOut += new TextDecoder().decode(value);
}
const rpcUrl = (JSON.parse(chainOut.split('\n')[0]!) as { rpc_url: string }).rpc_url;
const child = Bun.spawn([process.execPath, SERVERS, 'world', '8'], { stdout: 'pipe', stderr: 'inherit', env: { ...process.env, BENCH_EXTERNAL_RPC: rpcUrl } });
const reader = child.stdout.getReader();
let text = '';
while (text.split('\n').length <= 2) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`world exited before it was ready: ${text}`);
  text += new TextDecoder().decode(value);
}
const [ready, profilesLine] = text.split('\n');
const url = `http://127.0.0.1:${/READY (\d+)/.exec(ready!)![1]}/v1`;
const profiles = JSON.parse(profilesLine!) as ProfileData[];
const apis = profiles.map((p) => new ApiClient(url, p.api_key));

const samples: { t: number; rss: number }[] = [];
const start = Date.now();
const sampler = setInterval(() => samples.push({ t: (Date.now() - start) / 1000, rss: rssKiB(child.pid) }), 5_000);
let done = 0;
let failed = 0;
const inflight = new Set<Promise<void>>();
try {
  for (let i = 0; (Date.now() - start) / 1000 < SECONDS; i++) {
    const due = start + (i * 1000) / RATE;
    if (due > Date.now()) await Bun.sleep(due - Date.now());
    const w = i % profiles.length;
    const p = (async () => {
      try {
        const intent = await apis[w]!.call<{ transaction_id: string }>('bot', 'pay', { to: profiles[(w + 1) % profiles.length]!.username, amount: '0.01' });
        await confirmSignSubmit(apis[w]!, profiles[w]!, intent.transaction_id);
        done++;
      } catch (err) {
        failed++;
        if (failed < 5) console.error('payment failed:', (err as Error).message);
      }
    })();
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
    if (i % (RATE * 30) === 0) console.error(`… ${Math.round((Date.now() - start) / 1000)} s, ${done} payments, rss ${rssKiB(child.pid)} KiB`);
  }
  await Promise.all(inflight);
} finally {
  clearInterval(sampler);
  child.kill();
  chain.kill();
}
const avg = (xs: { rss: number }[]) => xs.reduce((s, x) => s + x.rss, 0) / Math.max(1, xs.length);
const first = avg(samples.filter((s) => s.t <= 60));
const last = avg(samples.filter((s) => s.t >= SECONDS - 60));
const drift = (last - first) / first;
console.log(`soak: ${done} payments in ${SECONDS} s (${failed} failed); RSS first minute ${(first / 1024).toFixed(1)} MiB, last minute ${(last / 1024).toFixed(1)} MiB, drift ${(drift * 100).toFixed(1)} % (goal < 10 %: ${Math.abs(drift) < 0.1 ? 'met' : 'NOT MET'})`);
