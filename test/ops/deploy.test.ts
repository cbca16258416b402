/** The deploy files say what the issue asks, and the alert rules use only metrics the daemon exposes. */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Metrics } from '../../src/metrics.ts';
import { openDatabase } from '../../src/db/open.ts';
import { ledgerMetricsSource } from '../../src/ops/ledger-metrics.ts';
import { nodeMetricsSource } from '../../src/ops/node-metrics.ts';
import { localNodeLocks } from '../../src/db/node-locks.ts';

const deploy = (name: string) => readFileSync(join(import.meta.dir, '..', '..', 'deploy', name), 'utf8');

test('every agent_wallet_ metric an alert rule reads is exposed on /metrics', async () => {
  const metrics = new Metrics();
  metrics.request('bot', 'pay', 200, 0.01);
  metrics.job('confirmations', false);
  metrics.setFeePayerLamports(1n);
  metrics.addSource(ledgerMetricsSource(openDatabase(':memory:', { network: 'simnet' })));
  metrics.addSource(nodeMetricsSource(localNodeLocks()));
  const exposed = new Set([...(await metrics.render()).matchAll(/^# TYPE (\w+) (\w+)/gm)].flatMap(([, name, type]) => (type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!])));
  const used = new Set([...deploy('alerts.yml').matchAll(/\b(agent_wallet_\w+)/g)].map(([, name]) => name!));
  expect(used.size).toBeGreaterThanOrEqual(8);
  expect([...used].filter((name) => !exposed.has(name))).toEqual([]);
});

test('the systemd unit is hardened and stops gracefully', () => {
  const unit = deploy('agent-wallet.service');
  for (const line of ['User=agent-wallet', 'ProtectSystem=strict', 'ReadWritePaths=/var/lib/agent-wallet', 'NoNewPrivileges=true', 'Restart=on-failure', 'KillSignal=SIGTERM', 'TimeoutStopSec=60']) {
    expect(unit).toContain(`\n${line}\n`);
  }
  expect(unit).toContain('serve --data-dir /var/lib/agent-wallet');
});

test('the Dockerfile runs the single binary as non-root with the data dir a volume; the Caddyfile proxies to the loopback daemon', () => {
  const docker = deploy('Dockerfile');
  expect(docker).toContain('USER agent-wallet');
  expect(docker).toContain('VOLUME /data');
  expect(docker).toContain('COPY --from=build /src/dist/agent-wallet /usr/local/bin/agent-wallet');
  const caddy = deploy('Caddyfile');
  expect(caddy).toContain('reverse_proxy 127.0.0.1:8787');
  expect(caddy).toContain('public_url = "https://wallet.example.com"');
});
