/**
 * Paging an account's history against simnet: the whole backlog newer than a cursor, newest first,
 * over several pages; and, through a real RPC proxy standing in for a node that ignores `before`,
 * a listing that fails instead of reading the same page forever.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { startSimnet, type Simnet } from '../../src/simnet/index.ts';
import { ChainUnavailableError } from '../../src/solana/errors.ts';
import { signaturesSince } from '../../src/solana/history.ts';
import { createRpcChainPort } from '../../src/solana/port.ts';

let simnet: Simnet;
let proxy: ReturnType<typeof Bun.serve>;
let account: Address;
/** Signatures of `account`, oldest first. */
let sent: string[];

/** Forwards every JSON-RPC call to simnet, without the `before` of getSignaturesForAddress. */
function startIgnoringBefore(target: string) {
  const strip = (call: { method?: string; params?: unknown[] }) => {
    const opts = call.method === 'getSignaturesForAddress' ? (call.params?.[1] as Record<string, unknown> | undefined) : undefined;
    if (opts) delete opts.before;
    return call;
  };
  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const body = (await req.json()) as object;
      const forwarded = Array.isArray(body) ? body.map(strip) : strip(body);
      const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(forwarded) });
      return new Response(await res.text(), { status: res.status, headers: { 'content-type': 'application/json' } });
    },
  });
}

beforeAll(async () => {
  simnet = await startSimnet({ port: 0, slotMs: 20 });
  proxy = startIgnoringBefore(simnet.url);
  account = (await generateKeyPairSigner()).address;
  // 250 transfers to one address (distinct amounts, so distinct transactions): three pages.
  sent = [];
  for (let i = 0; i < 250; i += 50) sent.push(...(await Promise.all(Array.from({ length: 50 }, (_, j) => simnet.airdrop(account, 1_000_000n + BigInt(i + j))))));
});
afterAll(async () => {
  await proxy.stop(true);
  await simnet.stop();
});

test('every signature newer than the cursor is listed, newest first, across pages', async () => {
  const chain = createRpcChainPort(simnet.url);
  const all = await signaturesSince(chain, account, undefined);
  expect(all.length).toBe(250);
  expect(new Set(all.map((s) => s.signature))).toEqual(new Set(sent));
  const cursor = all[230]!.signature;
  const since = await signaturesSince(chain, account, cursor);
  expect(since.map((s) => s.signature)).toEqual(all.slice(0, 230).map((s) => s.signature));
});

test('a node that ignores `before` fails the listing (chain unavailable) instead of serving its first page forever', async () => {
  const chain = createRpcChainPort(`http://127.0.0.1:${proxy.port}`);
  const outcome = await Promise.race([signaturesSince(chain, account, undefined).catch((e: unknown) => e), Bun.sleep(10_000).then(() => 'still paging after 10 s')]);
  expect(outcome).toBeInstanceOf(ChainUnavailableError);
});
