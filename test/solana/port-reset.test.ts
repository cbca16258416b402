/**
 * The chain port against a node that resets connections: a real TCP server that resets the first
 * `resets` connections after reading the request and answers later ones as a JSON-RPC node would.
 */
import { afterEach, expect, test } from 'bun:test';
import { createServer, type Server } from 'node:net';
import { createRpcChainPort } from '../../src/solana/port.ts';
import { ChainUnavailableError } from '../../src/solana/errors.ts';

const servers: Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

async function resettingNode(resets: number): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer((sock) => {
    connections++;
    if (connections <= resets) {
      sock.once('data', () => sock.resetAndDestroy());
      return;
    }
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString();
      const end = buf.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(buf)?.[1] ?? -1);
      if (end < 0 || buf.length - end - 4 < length) return;
      const out = JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(buf.slice(end + 4)).id, result: 42 });
      sock.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${out.length}\r\nconnection: close\r\n\r\n${out}`);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, connections: () => connections };
}

test('a connection reset by the node is retried and the call succeeds', async () => {
  const node = await resettingNode(1);
  expect(await createRpcChainPort(node.url).getBlockHeight()).toBe(42n);
  expect(node.connections()).toBe(2);
});

test('a node that keeps resetting is retried with a growing back-off until the deadline, then unavailable', async () => {
  const node = await resettingNode(1_000);
  const started = performance.now();
  const err = await createRpcChainPort(node.url, { deadlineMs: 1_000 }).getBlockHeight().catch((e) => e);
  expect(err).toBeInstanceOf(ChainUnavailableError);
  expect(performance.now() - started).toBeLessThan(2_000);
  // 250 + 500 ms of back-off fit in the second: three attempts, not a tight loop.
  expect(node.connections()).toBe(3);
});
