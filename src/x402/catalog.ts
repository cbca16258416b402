/**
 * The public catalog of paid APIs (SPEC x402_catalog, DESIGN §8): operator-curated with
 * `agent-wallet admin catalog add`, every entry verified by a real probe (it must answer 402 with
 * a Solana `exact` USDC option for this service's network), re-verified daily; an entry that stops
 * verifying is hidden, and shown again when it verifies.
 */
import type { Store } from '../db/store.ts';
import { AppError } from '../errors.ts';
import type { Config } from '../config.ts';
import { newId } from '../contract/ids.ts';
import { listCatalog, recordCatalogCheck, upsertCatalogEntry, type CatalogProbe, type CatalogRow } from '../db/x402.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { probe } from './purchase.ts';
import { upstreamRequest } from './http.ts';

type ProbeConfig = Pick<Config, 'outbound' | 'solana' | 'usdcMint'>;

/** Probes `url` as a buyer would; what it costs, or why it is not a payable x402 API here. */
export async function verifyEntry(config: ProbeConfig, url: string, method = 'GET'): Promise<{ ok: true; probe: CatalogProbe } | { ok: false; error: string }> {
  try {
    const found = await probe(config, upstreamRequest({ url, method }));
    if (!found.paymentRequired) return { ok: false, error: `answered HTTP ${found.response.status}, not 402 Payment Required` };
    const o = found.option;
    return { ok: true, probe: { x402_version: found.required.version, network: o.network, asset: o.asset, pay_to: o.payTo, price: o.amountAtomic } };
  } catch (err) {
    if (err instanceof AppError) return { ok: false, error: err.message };
    throw err;
  }
}

/** Normalised tags: lower case, trimmed, unique, at most 10 of at most 32 characters. */
export function normaliseTags(tags: readonly string[]): string[] {
  const out = [...new Set(tags.map((t) => t.trim().toLowerCase()).filter((t) => t !== ''))];
  if (out.length > 10) throw new RangeError('at most 10 tags');
  for (const t of out) if (t.length > 32 || !/^[a-z0-9][a-z0-9._-]*$/.test(t)) throw new RangeError(`tag "${t}" must be 1–32 characters of a-z, 0-9, ".", "_", "-"`);
  return out;
}

/** Probes and stores (or refreshes) an entry; throws AppError when the URL does not verify. */
export async function addEntry(
  config: ProbeConfig,
  db: Store,
  e: { url: string; method?: string; name: string; description: string; tags: string[] },
  now = Date.now(),
): Promise<CatalogRow> {
  const method = (e.method ?? 'GET').toUpperCase();
  const url = upstreamRequest({ url: e.url, method }).url;
  const checked = await verifyEntry(config, url, method);
  if (!checked.ok) throw new AppError('VALIDATION_ERROR', `${url} does not verify as a paid API: ${checked.error}`, { howToFix: 'Add only URLs that answer 402 with a Solana exact USDC option on this network.' });
  return await db.transaction(async () => await upsertCatalogEntry(db, { entry_id: newId('catalogEntry'), url, method, name: e.name, description: e.description, tags: e.tags, ...checked.probe, now }));
}

/** Re-verifies every entry (hidden ones too, so a seller that recovers is shown again). */
export async function reverifyCatalog(config: ProbeConfig, db: Store, now: () => number = Date.now): Promise<{ verified: number; hidden: number }> {
  let verified = 0;
  let hidden = 0;
  for (const entry of (await listCatalog(db, { includeHidden: true }))) {
    const outcome = await verifyEntry(config, entry.url, entry.method);
    await db.transaction(async () => await recordCatalogCheck(db, entry.entry_id, now(), outcome));
    if (outcome.ok) verified++;
    else hidden++;
  }
  return { verified, hidden };
}

const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** An entry as the public (and the admin list) shows it. */
export function catalogView(row: CatalogRow) {
  return {
    url: row.url,
    method: row.method,
    name: row.name,
    description: row.description,
    tags: JSON.parse(row.tags) as string[],
    price: toUsdcNumber(row.price),
    price_atomic: row.price.toString(),
    asset: row.asset,
    network: row.network,
    pay_to: row.pay_to,
    x402_version: Number(row.x402_version),
    verified_at: iso(row.verified_at),
  };
}

/** The verified entries matching `query` (words in name, description, URL or tags) and `tag`. */
export async function searchCatalog(db: Store, opts: { query?: string; tag?: string }) {
  const words = (opts.query ?? '').toLowerCase().split(/\s+/).filter((w) => w !== '');
  const tag = opts.tag?.trim().toLowerCase();
  const items = (await listCatalog(db))
    .map(catalogView)
    .filter((e) => (tag ? e.tags.includes(tag) : true))
    .filter((e) => {
      const text = `${e.name} ${e.description} ${e.url} ${e.tags.join(' ')}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
  return { items, total: items.length };
}
