/** The client's retry rule for dropped connections: only requests with an idempotency key are sent again. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ApiClient, ConnectionError } from '../../src/client/api.ts';

/** A TCP server that resets every other connection and answers the rest with a success envelope. */
let requests = 0;
let server: { port: number; stop(closeActiveConnections?: boolean): void };
beforeAll(() => {
  server = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket) {
        requests++;
        if (requests % 2 === 1) {
          socket.terminate();
          return;
        }
        const body = JSON.stringify({ success: true, data: { n: requests } });
        socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
      },
    },
  });
});
afterAll(() => server.stop(true));

describe('ApiClient', () => {
  test('a reset connection is retried once when the call carries an idempotency key', async () => {
    requests = 0;
    const api = new ApiClient(`http://127.0.0.1:${server.port}/v1`, undefined, 5_000);
    expect(await api.call('bot', 'pay', { to: 'x', amount: 1 }, { idempotencyKey: 'k-1' })).toEqual({ n: 2 });
  });

  test('without an idempotency key a reset connection is a ConnectionError: nothing is sent twice', async () => {
    requests = 0;
    const api = new ApiClient(`http://127.0.0.1:${server.port}/v1`, undefined, 5_000);
    await expect(api.call('bot', 'dkg_init', {})).rejects.toBeInstanceOf(ConnectionError);
    expect(requests).toBe(1);
  });
});

test('a keyed call waits out "still running" (409 with Retry-After) and gets the first request\'s result', async () => {
  let n = 0;
  const busy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      ++n === 1
        ? Response.json({ success: false, error: { code: 'IDEMPOTENCY_CONFLICT', message: 'still running', how_to_fix: 'retry' } }, { status: 409, headers: { 'retry-after': '1' } })
        : Response.json({ success: true, data: { transaction_id: 'tx_1' } }),
  });
  try {
    const api = new ApiClient(`http://127.0.0.1:${busy.port}/v1`);
    expect(await api.call('bot', 'pay', {}, { idempotencyKey: 'k' })).toEqual({ transaction_id: 'tx_1' });
    expect(n).toBe(2);
    // Without a key the same answer is an error at once.
    n = 0;
    await expect(api.call('bot', 'pay', {})).rejects.toMatchObject({ errorCode: 'IDEMPOTENCY_CONFLICT' });
    expect(n).toBe(1);
  } finally {
    busy.stop(true);
  }
});

describe("a balancer's own answer (a node died with the request)", () => {
  /** Answers 502 with an empty body `failures` times (as Caddy does), then a success envelope. */
  function balancer(failures: number) {
    let seen = 0;
    const keys: (string | null)[] = [];
    const srv = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => {
        keys.push(req.headers.get('x-idempotency-key'));
        return ++seen <= failures ? new Response(null, { status: 502 }) : Response.json({ success: true, data: { seen } });
      },
    });
    return { url: `http://127.0.0.1:${srv.port}/v1`, seen: () => seen, keys, stop: () => srv.stop(true) };
  }

  test('a keyed call is sent again and gets the answer; the same key every time', async () => {
    const lb = balancer(2);
    try {
      expect(await new ApiClient(lb.url).call('bot', 'pay', {}, { idempotencyKey: 'k-1' })).toEqual({ seen: 3 });
      expect(lb.keys).toEqual(['k-1', 'k-1', 'k-1']);
    } finally {
      lb.stop();
    }
  });

  test('an unkeyed call is not sent twice: a ConnectionError naming the status, never a TypeError', async () => {
    const lb = balancer(1);
    try {
      const err = await new ApiClient(lb.url).call('bot', 'pay', {}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as Error).message).toContain('answered HTTP 502 without a JSON envelope');
      expect(lb.seen()).toBe(1);
    } finally {
      lb.stop();
    }
  });

  test('a keyed call whose balancer keeps failing gives up with advice to retry with the same key', async () => {
    const lb = balancer(100);
    try {
      const err = await new ApiClient(lb.url).call('bot', 'pay', {}, { idempotencyKey: 'k-2' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as Error).message).toContain('retry with the same idempotency key');
      expect(lb.seen()).toBe(4);
    } finally {
      lb.stop();
    }
  });
});
