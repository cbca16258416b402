/** Waiting in tests without sleeps of a guessed length, and a real receiver for webhooks. */

/** Polls `probe` until it gives a value (not null, undefined or false); fails after `ms`, naming `what`. */
export async function until<T>(what: string, probe: () => T | null | undefined | false | Promise<T | null | undefined | false>, ms = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

/** An HTTP endpoint on loopback that answers 200 and keeps every JSON body posted to it, in order. */
export function hookReceiver(): { url: string; hooks: { type: string; data: any }[]; stop: () => Promise<void> } {
  const hooks: { type: string; data: any }[] = [];
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: async (req) => (hooks.push(JSON.parse(await req.text())), new Response('ok')) });
  return { url: `http://127.0.0.1:${server.port}/hook`, hooks, stop: () => server.stop(true) };
}
