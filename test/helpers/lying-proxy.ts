/**
 * A real HTTP man in the middle in front of the real app, standing in for a compromised server:
 * every request is forwarded as is; `lie` may rewrite the answer's `data` (and the message in it)
 * per action. It counts the signing calls that reach the server, so a test can show that no share
 * ever left the client.
 */
export type Lie = (action: string, params: Record<string, any>, data: Record<string, any>) => Promise<Record<string, any>> | Record<string, any>;

export interface LyingProxy {
  url: string;
  /** The rewrite applied to successful answers; null forwards them untouched (the honest path). */
  lie: Lie | null;
  /** How many calls of each action reached the server through the proxy. */
  calls: Map<string, number>;
  count(action: string): number;
  stop(): Promise<void>;
}

/** Starts the proxy in front of `target` (an API base URL ending in /v1). */
export function startLyingProxy(target: string): LyingProxy {
  const calls = new Map<string, number>();
  const proxy: LyingProxy = {
    url: '',
    lie: null,
    calls,
    count: (action) => calls.get(action) ?? 0,
    stop: async () => {
      await server.stop(true);
    },
  };
  const base = new URL(target);
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.text();
      let params: Record<string, any> = {};
      try {
        params = JSON.parse(body) as Record<string, any>;
      } catch {
        // Not JSON: forwarded as is.
      }
      const action = String(params.action ?? '');
      calls.set(action, (calls.get(action) ?? 0) + 1);
      const headers = new Headers(req.headers);
      headers.delete('host');
      const res = await fetch(`${base.origin}${url.pathname}${url.search}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : body });
      const text = await res.text();
      let envelope: { success?: boolean; data?: Record<string, any> };
      try {
        envelope = JSON.parse(text);
      } catch {
        return new Response(text, { status: res.status, headers: res.headers });
      }
      if (envelope.success === true && envelope.data && proxy.lie) envelope = { ...envelope, data: await proxy.lie(action, params, envelope.data) };
      const out = new Headers(res.headers);
      out.delete('content-length');
      out.delete('content-encoding');
      return new Response(JSON.stringify(envelope), { status: res.status, headers: out });
    },
  });
  proxy.url = `http://127.0.0.1:${server.port}${base.pathname}`;
  return proxy;
}
