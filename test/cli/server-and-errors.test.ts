/**
 * The CLI's words where a new user trips: --server without /v1, a data dir another daemon holds,
 * and a refused key given to set-api-key. The real entry in a child process, against a stub API.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

/** A stub daemon API: every call is refused as a wrong key would be; it records the paths asked. */
const paths: string[] = [];
const stub = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: (req) => {
    paths.push(new URL(req.url).pathname);
    return Response.json({ success: false, error: { code: 'UNAUTHORIZED', message: 'Invalid or revoked API key.', how_to_fix: 'Send "Authorization: Bearer <api_key>".' } }, { status: 401 });
  },
});
afterAll(() => stub.stop(true));
const origin = `http://127.0.0.1:${stub.port}`;

/** A home with a profile "default" on the stub. */
function home(): string {
  const dir = tempDir('aw-cli-srv-');
  mkdirSync(dir, { recursive: true });
  const profile = { version: 1, server_url: `${origin}/v1`, wallet_id: 'wal_1', username: 'bot', address: 'x', network: 'simnet', api_key: newApiKey('bot').key, key_package: '', public_package: {}, created_at: new Date().toISOString() };
  writeFileSync(join(dir, 'default.json'), JSON.stringify(profile), { mode: 0o600 });
  return dir;
}

describe('--server', () => {
  test('without /v1 (no path, or /) reaches the API at /v1', async () => {
    for (const server of [origin, `${origin}/`]) {
      paths.length = 0;
      const res = await runCli(['balance', '--server', server, '--home', home(), '--json']);
      expect(res.json.error.code).toBe('UNAUTHORIZED');
      expect(paths).toEqual(['/v1/bot']);
    }
  });

  test('with another path not ending in /v1: exit 2 saying to add /v1', async () => {
    const res = await runCli(['balance', '--server', `${origin}/wallet`, '--home', home()]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`${origin}/wallet/v1`);
  });
});

describe('set-api-key', () => {
  test('a well-formed key the daemon refuses: says the key is wrong and nothing was saved, not to run set-api-key', async () => {
    const res = await runCli(['set-api-key', newApiKey('bot').key, '--home', home()]);
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('nothing saved');
    expect(res.stderr).not.toContain('set-api-key');
    const json = await runCli(['set-api-key', newApiKey('bot').key, '--home', home(), '--json']);
    expect(json.json.error.code).toBe('UNAUTHORIZED');
    expect(json.json.error.how_to_fix).not.toContain('set-api-key');
  });
});

describe('a data directory in use', () => {
  test('serve says so in one line, without a stack trace (exit 1)', async () => {
    const dir = tempDir('aw-cli-busy-');
    // This test process is alive: the lock's holder is a live daemon as far as serve can tell.
    writeFileSync(join(dir, 'daemon.lock'), `${process.pid}\n`);
    const res = await runCli(['serve', '--data-dir', dir, '--port', '0', '--simnet-port', '0']);
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringContaining(`the data directory ${dir} is in use by another agent-wallet daemon (pid ${process.pid})`)]);
  }, 20_000);
});
