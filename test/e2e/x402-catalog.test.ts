/**
 * The public x402 catalog: an operator adds a paid API (verified by a real probe), it is listed on
 * the public endpoint with its price; when the seller stops answering 402 the daily
 * re-verification hides it, and shows it again once it answers 402 again. The admin CLI works on
 * a data directory's ledger.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { catalogCommand } from '../../src/cli/admin-catalog.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/open.ts';
import { listCatalog } from '../../src/db/x402.ts';
import { reverifyCatalogJob } from '../../src/jobs/x402-catalog.ts';
import { addEntry } from '../../src/x402/catalog.ts';
import { runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';
import { startWorld, type World } from '../helpers/world.ts';
import { sellerAddress, startFacilitator, startV2Seller, type Server } from '../x402/sellers.ts';

let world: World;
let seller: Server;

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  seller = await startV2Seller(world, await startFacilitator(world), { payTo: await sellerAddress(world), price: '$0.02' });
});
afterAll(async () => {
  await seller?.stop();
  await world?.stop();
});

const publicCatalog = async (query = '') => {
  const res = await fetch(`${world.url}/public?action=x402_catalog${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { items: any[]; total: number } }).data;
};

describe('public catalog', () => {
  test('an added entry is verified by a probe and listed publicly (GET, no auth) with its price', async () => {
    await addEntry(world.services.config, world.services.db, { url: `${seller.url}/catalogued`, name: 'Jokes', description: 'one paid joke per call', tags: ['fun', 'text'] });
    const all = await publicCatalog();
    expect(all.total).toBe(1);
    expect(all.items[0]).toMatchObject({ url: `${seller.url}/catalogued`, name: 'Jokes', price: 0.02, price_atomic: '20000', network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', tags: ['fun', 'text'], x402_version: 2 });
    expect((await publicCatalog('&tag=fun')).total).toBe(1);
    expect((await publicCatalog('&tag=weather')).total).toBe(0);
    expect((await publicCatalog('&query=paid%20joke')).total).toBe(1);
    expect((await publicCatalog('&query=forecast')).total).toBe(0);
  });

  test('a URL that does not answer 402 cannot be added', async () => {
    await expect(addEntry(world.services.config, world.services.db, { url: `${seller.url}/free`, name: 'Free', description: 'free', tags: [] })).rejects.toThrow('not 402');
    await expect(addEntry(world.services.config, world.services.db, { url: `${seller.url}/eth-only`, name: 'Eth', description: 'eth', tags: [] })).rejects.toThrow('eip155:8453');
  });

  test('the seller stops answering 402 → hidden after re-verification; answering again → listed again', async () => {
    seller.state.closed = true;
    expect(await reverifyCatalogJob(world.services)).toEqual({ verified: 0, hidden: 1 });
    expect((await publicCatalog()).total).toBe(0);
    expect((await listCatalog(world.services.db, { includeHidden: true }))[0]).toMatchObject({ status: 'hidden', last_error: 'answered HTTP 200, not 402 Payment Required' });
    seller.state.closed = false;
    expect(await reverifyCatalogJob(world.services)).toEqual({ verified: 1, hidden: 0 });
    expect((await publicCatalog()).total).toBe(1);
  });

  test('the CLI: x402 catalog [--query] [--tag] needs no wallet', async () => {
    const all = await runCli(['x402', 'catalog', '--json', '--server', world.url]);
    expect(all.code).toBe(0);
    expect(all.json).toMatchObject({ total: 1, items: [{ name: 'Jokes', price: 0.02 }] });
    const none = await runCli(['x402', 'catalog', '--tag', 'weather', '--server', world.url]);
    expect(none.stdout).toContain('no matching entries');
  });
});

describe('admin catalog (CLI on a data directory)', () => {
  test('add probes with the daemon config and stores the entry; list shows it; remove deletes it; bad input is refused', async () => {
    const dataDir = join(tempDir('aw-catalog-'), 'data');
    const env = { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' };
    openDatabase(join(dataDir, 'wallet.db'), { network: loadConfig({ dataDir }, env).solana.network }).close();
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), env };
    const url = `${seller.url}/catalogued`;

    expect(await catalogCommand(['add', url, '--name', 'Jokes', '--description', 'one paid joke', '--tag', 'Fun', '--json', '--data-dir', dataDir], io)).toBe(0);
    expect(JSON.parse(out.join(''))).toMatchObject({ url, name: 'Jokes', price: 0.02, tags: ['fun'] });
    out.length = 0;
    expect(await catalogCommand(['list', '--json', '--data-dir', dataDir], io)).toBe(0);
    expect(JSON.parse(out.join(''))).toMatchObject({ total: 1, items: [{ url, status: 'verified' }] });
    // The same through the real binary entry: `agent-wallet admin catalog …` dispatches here.
    const cli = await runCli(['admin', 'catalog', 'list', '--data-dir', dataDir]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(`Jokes  0.02 USDC  GET ${url}`);

    // Without the operator's allowlist the same loopback URL is refused by the outbound rules.
    const strict = { ...io, env: {} };
    expect(await catalogCommand(['add', `${seller.url}/paid`, '--name', 'P', '--description', 'd', '--data-dir', dataDir], strict)).toBe(1);
    expect(err.join('')).toContain('refusing to contact');
    await expect(catalogCommand(['add', url, '--data-dir', dataDir], io)).rejects.toThrow('usage');

    out.length = 0;
    expect(await catalogCommand(['remove', url, '--data-dir', dataDir], io)).toBe(0);
    expect(await catalogCommand(['list', '--all', '--json', '--data-dir', dataDir], io)).toBe(0);
    expect(JSON.parse(out.slice(1).join(''))).toMatchObject({ total: 0 });
  });
});
