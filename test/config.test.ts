import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config.ts';
import { tempDir } from './helpers/services.ts';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('config', () => {
  test('first start writes a commented config.toml (0600) and uses the documented defaults', () => {
    const dataDir = tempDir();
    const c = loadConfig({ dataDir }, {});
    const file = join(dataDir, 'config.toml');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain('# Agent Wallet Service configuration.');
    expect(c.server).toEqual({ host: '127.0.0.1', port: 8787, tls_cert_file: '', tls_key_file: '', metrics_token: '', trusted_proxies: [] });
    expect(c.solana.network).toBe('simnet');
    expect(c.simnet.rpc_port).toBe(8899);
    expect(c.usdcMint).toBe('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
    expect(c.money).toEqual({ paymentMin: 10_000n, withdrawalFee: 100_000n, accountSetupFee: 250_000n, saleMin: 0n, saleCredit: 10_000_000n, maxAmount: 1_000_000_000_000n });
    // The written file parses back to the same config.
    expect(loadConfig({ dataDir }, {}).server.port).toBe(8787);
  });

  test('precedence is defaults < file < environment < flags', () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'config.toml'), '[server]\nport = 9000\nhost = "127.0.0.2"\n[fees]\npayment_bps = 25\n');
    expect(loadConfig({ dataDir }, {}).server.port).toBe(9000);
    const env = { AGENT_WALLET_SERVER_PORT: '9100', AGENT_WALLET_FEES_PAYMENT_BPS: '10', AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1, localhost' };
    const c = loadConfig({ dataDir }, env);
    expect(c.server.port).toBe(9100);
    expect(c.server.host).toBe('127.0.0.2');
    expect(c.fees.payment_bps).toBe(10);
    expect(c.outbound.allow_hosts).toEqual(['127.0.0.1', 'localhost']);
    expect(loadConfig({ dataDir, port: 9200, host: '0.0.0.0' }, env).server).toMatchObject({ port: 9200, host: '0.0.0.0' });
  });

  test.each([
    ['[server]\nport = "eighty"\n', {}, 'server.port'],
    ['[server]\nport = 70000\n', {}, 'server.port'],
    ['[solana]\nnetwork = "moonnet"\n', {}, 'solana.network'],
    ['[server]\nprot = 1\n', {}, 'server.prot'],
    ['colour = "blue"\n', {}, 'colour'],
    ['[fees]\npayment_min = "0.0000001"\n', {}, 'fees.payment_min'],
    ['[limits]\nmax_amount = "-5"\n', {}, 'limits.max_amount'],
    ['[limits]\nmax_amount = "0"\n', {}, 'limits.max_amount'],
    ['[solana]\nnetwork = "custom"\n', {}, 'solana.rpc_url'],
    ['[solana]\nnetwork = "custom"\nrpc_url = "http://127.0.0.1:1"\n', {}, 'solana.usdc_mint'],
    ['[solana]\nrpc_url = "http://x"\n', {}, 'solana.rpc_url'],
    ['[server]\ntls_cert_file = "c.pem"\n', {}, 'server.tls_key_file'],
    ['public_url = "ftp://x"\n', {}, 'public_url'],
    ['', { AGENT_WALLET_SERVER_PORT: 'abc' }, 'server.port'],
    ['', { AGENT_WALLET_SOLANA_NETWORK: 'testnet' }, 'solana.network'],
    ['[server\n', {}, '(file)'],
  ] as const)('a bad value stops start-up naming the key: %p %p → %s', (toml, env, key) => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'config.toml'), toml);
    const err = configError(() => loadConfig({ dataDir }, env));
    expect(err.keyPath).toBe(key);
    expect(err.message).toContain(key);
  });

  test('server.trusted_proxies takes IP addresses only (from the file or AGENT_WALLET_SERVER_TRUSTED_PROXIES), naming the bad one', () => {
    const dataDir = tempDir('aw-cfg-');
    expect(loadConfig({ dataDir }, { AGENT_WALLET_SERVER_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.5,::1' }).server.trusted_proxies).toEqual(['127.0.0.1', '10.0.0.5', '::1']);
    expect(() => loadConfig({ dataDir }, { AGENT_WALLET_SERVER_TRUSTED_PROXIES: '127.0.0.1,proxy.local' })).toThrow('"proxy.local" is not an IP address');
  });

  test('an explicit --config that does not exist is an error, not a silent default', () => {
    const err = configError(() => loadConfig({ dataDir: tempDir(), configFile: '/nonexistent/agent-wallet.toml' }, {}));
    expect(err.message).toContain('does not exist');
  });

  test('devnet and mainnet default their RPC URL and USDC mint', () => {
    const dev = loadConfig({ dataDir: tempDir() }, { AGENT_WALLET_SOLANA_NETWORK: 'devnet' });
    expect(dev.rpcUrl).toBe('https://api.devnet.solana.com');
    const main = loadConfig({ dataDir: tempDir() }, { AGENT_WALLET_SOLANA_NETWORK: 'mainnet' });
    expect(main.usdcMint).toBe('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');
  });

  test('the RPC request budget defaults per network, reads fractions from the environment, and 0 means unlimited', () => {
    const custom = { AGENT_WALLET_SOLANA_NETWORK: 'custom', AGENT_WALLET_SOLANA_RPC_URL: 'https://rpc.example.com', AGENT_WALLET_SOLANA_USDC_MINT: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' };
    expect(loadConfig({ dataDir: tempDir() }, {}).rpcMaxRps).toBe(0);
    expect(loadConfig({ dataDir: tempDir() }, { AGENT_WALLET_SOLANA_NETWORK: 'mainnet' }).rpcMaxRps).toBe(8);
    expect(loadConfig({ dataDir: tempDir() }, custom).rpcMaxRps).toBe(10);
    expect(loadConfig({ dataDir: tempDir() }, { ...custom, AGENT_WALLET_SOLANA_RPC_MAX_RPS: '2.5' }).rpcMaxRps).toBe(2.5);
    expect(loadConfig({ dataDir: tempDir() }, { ...custom, AGENT_WALLET_SOLANA_RPC_MAX_RPS: '0' }).rpcMaxRps).toBe(0);
    expect(configError(() => loadConfig({ dataDir: tempDir() }, { ...custom, AGENT_WALLET_SOLANA_RPC_MAX_RPS: 'fast' })).keyPath).toBe('solana.rpc_max_rps');
    const failover = loadConfig({ dataDir: tempDir() }, { ...custom, AGENT_WALLET_SOLANA_RPC_URLS: 'https://a.example.com, https://b.example.com' });
    expect(failover.rpcFallbackUrls).toEqual(['https://a.example.com', 'https://b.example.com']);
    expect(configError(() => loadConfig({ dataDir: tempDir() }, { ...custom, AGENT_WALLET_SOLANA_RPC_URLS: 'ftp://x' })).keyPath).toBe('solana.rpc_urls');
    expect(configError(() => loadConfig({ dataDir: tempDir() }, { AGENT_WALLET_SOLANA_RPC_URLS: 'https://a.example.com' })).keyPath).toBe('solana.rpc_urls');
  });

  test('[database] url: empty is the embedded SQLite; a postgres:// URL with a host is taken; anything else stops the start naming the key, and pool_size is bounded', () => {
    expect(loadConfig({ dataDir: tempDir() }, {}).database).toEqual({ url: '', pool_size: 10, tls: false });
    expect(loadConfig({ dataDir: tempDir() }, { AGENT_WALLET_DATABASE_URL: 'postgresql://wallet:secret@db.internal:5432/wallet' }).database.url).toBe('postgresql://wallet:secret@db.internal:5432/wallet');
    for (const url of ['mysql://db/wallet', 'postgres:///wallet', 'db.internal:5432']) {
      const err = configError(() => loadConfig({ dataDir: tempDir() }, { AGENT_WALLET_DATABASE_URL: url }));
      expect(err.keyPath).toBe('database.url');
    }
    expect(configError(() => loadConfig({ dataDir: tempDir() }, { AGENT_WALLET_DATABASE_POOL_SIZE: '0' })).keyPath).toBe('database.pool_size');
  });
});
