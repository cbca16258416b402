/** x402 purchases and the public catalog of paid APIs. */
import type { Store } from './store.ts';

export type PurchaseStatus = 'open' | 'signed' | 'settling' | 'pending' | 'completed' | 'failed';

export interface PurchaseRow {
  fetch_id: string;
  transaction_id: string;
  wallet_id: string;
  url: string;
  host: string;
  method: string;
  request_sealed: Uint8Array;
  x402_version: bigint;
  requirements: string;
  accepted: string;
  network: string;
  asset: string;
  pay_to: string;
  fee_payer: string;
  amount: bigint;
  status: PurchaseStatus;
  response: string | null;
  signature: string | null;
  error: string | null;
  settle_started_at: bigint | null;
  created_at: bigint;
  updated_at: bigint;
}

export type NewPurchase = Omit<PurchaseRow, 'x402_version' | 'amount' | 'status' | 'response' | 'signature' | 'error' | 'settle_started_at' | 'created_at' | 'updated_at'> & {
  x402_version: number;
  amount: bigint;
  now: number;
};

export async function insertPurchase(db: Store, p: NewPurchase): Promise<void> {
  await db.run(`INSERT INTO x402_purchases (fetch_id, transaction_id, wallet_id, url, host, method, request_sealed, x402_version, requirements, accepted, network, asset,
       pay_to, fee_payer, amount, status, created_at, updated_at)
     VALUES ($fetch_id, $transaction_id, $wallet_id, $url, $host, $method, $request_sealed, $x402_version, $requirements, $accepted, $network, $asset,
       $pay_to, $fee_payer, $amount, 'open', $now, $now)`, {
    fetch_id: p.fetch_id,
    transaction_id: p.transaction_id,
    wallet_id: p.wallet_id,
    url: p.url,
    host: p.host,
    method: p.method,
    request_sealed: p.request_sealed,
    x402_version: p.x402_version,
    requirements: p.requirements,
    accepted: p.accepted,
    network: p.network,
    asset: p.asset,
    pay_to: p.pay_to,
    fee_payer: p.fee_payer,
    amount: p.amount,
    now: p.now,
  });
}

/** A purchase of `walletId` only: another wallet's fetch_id is as unknown as a made-up one. */
export async function getPurchase(db: Store, walletId: string, fetchId: string): Promise<PurchaseRow | null> {
  return await db.get<PurchaseRow>('SELECT * FROM x402_purchases WHERE fetch_id = ? AND wallet_id = ?', fetchId, walletId);
}

export async function getPurchaseById(db: Store, fetchId: string): Promise<PurchaseRow | null> {
  return await db.get<PurchaseRow>('SELECT * FROM x402_purchases WHERE fetch_id = ?', fetchId);
}

/** Moves a purchase from one of `from` to `to`; false when someone else moved it first. */
export async function movePurchase(
  db: Store,
  fetchId: string,
  from: readonly PurchaseStatus[],
  to: PurchaseStatus,
  now: number,
  set: { response?: string; signature?: string; error?: string | null; settleStarted?: boolean } = {},
): Promise<boolean> {
  const placeholders = from.map(() => '?').join(', ');
  return (
    (await db
      .run(`UPDATE x402_purchases SET status = ?, updated_at = ?, response = coalesce(?, response), signature = coalesce(?, signature),
           error = CASE WHEN ? = 1 THEN ? ELSE error END, settle_started_at = CASE WHEN ? = 1 THEN ? ELSE settle_started_at END
         WHERE fetch_id = ? AND status IN (${placeholders})`, to,
        now,
        set.response ?? null,
        set.signature ?? null,
        set.error !== undefined ? 1 : 0,
        set.error ?? null,
        set.settleStarted ? 1 : 0,
        now,
        fetchId,
        ...from,
      )).changes === 1
  );
}

/**
 * Purchases the outcome sweep looks at, oldest first: outcomes not known yet (sent, then a timeout
 * or a crash); signed bytes never settled whose blockhash has expired by our view (`height`), so
 * nothing holds a reservation forever; and purchases released since `failedSince`, in case a
 * lagging view took a landed transfer for absent.
 */
export async function unresolvedPurchases(db: Store, q: { staleSettlingBefore: number; height: bigint; failedSince: number }, limit = 100): Promise<PurchaseRow[]> {
  return await db
    .all<PurchaseRow>(`SELECT p.* FROM x402_purchases p JOIN transactions t ON t.transaction_id = p.transaction_id
       WHERE p.status = 'pending'
          OR (p.status = 'settling' AND p.settle_started_at < ?)
          OR (p.status IN ('open', 'signed') AND t.status = 'pending' AND t.last_valid_block_height < ?)
          OR (p.status = 'failed' AND t.status = 'failed' AND t.signed_tx IS NOT NULL AND p.updated_at >= ?)
       ORDER BY p.updated_at LIMIT ?`, q.staleSettlingBefore, q.height, q.failedSince, limit);
}

/** Whether any purchase could need the sweep (so an idle daemon does not read the height for nothing). */
export async function anyUnsettledPurchase(db: Store, failedSince: number): Promise<boolean> {
  return (
    (await db
      .get(`SELECT 1 FROM x402_purchases p JOIN transactions t ON t.transaction_id = p.transaction_id
         WHERE p.status IN ('settling', 'pending') OR (p.status IN ('open', 'signed') AND t.status = 'pending') OR (p.status = 'failed' AND p.updated_at >= ?) LIMIT 1`, failedSince)) !== null
  );
}

/**
 * Records the landed x402 transfer: the x402 transaction moves to completed with its signature.
 * From pending, or from failed: the chain is the truth (a broadcast of the partially signed bytes
 * through submit_signed_tx is refused and marks the row failed, yet the facilitator can still land
 * them). False when it was neither (already recorded).
 */
export async function completeX402Tx(db: Store, transactionId: string, signature: string, now: number): Promise<boolean> {
  return (
    (await db
      .run("UPDATE transactions SET status = 'completed', signature = ?, error = NULL, completed_at = ?, updated_at = ? WHERE transaction_id = ? AND status IN ('pending', 'failed') AND type = 'x402'", signature, now, now, transactionId)).changes === 1
  );
}

// ---------------------------------------------------------------------------------------------
// The catalog

export interface CatalogRow {
  entry_id: string;
  url: string;
  method: string;
  name: string;
  description: string;
  tags: string;
  status: 'verified' | 'hidden';
  x402_version: bigint;
  network: string;
  asset: string;
  pay_to: string;
  price: bigint;
  verified_at: bigint | null;
  checked_at: bigint;
  last_error: string | null;
  created_at: bigint;
  updated_at: bigint;
}

/** What a successful probe found. */
export interface CatalogProbe {
  x402_version: number;
  network: string;
  asset: string;
  pay_to: string;
  price: bigint;
}

/** Adds an entry, or replaces the one with the same URL (re-adding refreshes name, tags and the probe). */
export async function upsertCatalogEntry(db: Store, e: { entry_id: string; url: string; method: string; name: string; description: string; tags: string[] } & CatalogProbe & { now: number }): Promise<CatalogRow> {
  await db.run(`INSERT INTO x402_catalog (entry_id, url, method, name, description, tags, status, x402_version, network, asset, pay_to, price, verified_at, checked_at, created_at, updated_at)
     VALUES ($entry_id, $url, $method, $name, $description, $tags, 'verified', $x402_version, $network, $asset, $pay_to, $price, $now, $now, $now, $now)
     ON CONFLICT(url) DO UPDATE SET method = excluded.method, name = excluded.name, description = excluded.description, tags = excluded.tags,
       status = 'verified', x402_version = excluded.x402_version, network = excluded.network, asset = excluded.asset, pay_to = excluded.pay_to,
       price = excluded.price, verified_at = excluded.verified_at, checked_at = excluded.checked_at, last_error = NULL, updated_at = excluded.updated_at`, {
    entry_id: e.entry_id,
    url: e.url,
    method: e.method,
    name: e.name,
    description: e.description,
    tags: JSON.stringify(e.tags),
    x402_version: e.x402_version,
    network: e.network,
    asset: e.asset,
    pay_to: e.pay_to,
    price: e.price,
    now: e.now,
  });
  return (await db.get<CatalogRow>('SELECT * FROM x402_catalog WHERE url = ?', e.url))!;
}

/** Records a re-verification: success refreshes the probe and shows the entry; failure hides it. */
export async function recordCatalogCheck(db: Store, entryId: string, now: number, outcome: { ok: true; probe: CatalogProbe } | { ok: false; error: string }): Promise<void> {
  if (outcome.ok) {
    const p = outcome.probe;
    await db.run(`UPDATE x402_catalog SET status = 'verified', x402_version = ?, network = ?, asset = ?, pay_to = ?, price = ?, verified_at = ?, checked_at = ?, last_error = NULL, updated_at = ?
       WHERE entry_id = ?`, p.x402_version, p.network, p.asset, p.pay_to, p.price, now, now, now, entryId);
  } else {
    await db.run("UPDATE x402_catalog SET status = 'hidden', checked_at = ?, last_error = ?, updated_at = ? WHERE entry_id = ?", now, outcome.error.slice(0, 500), now, entryId);
  }
}

export async function listCatalog(db: Store, opts: { includeHidden?: boolean } = {}): Promise<CatalogRow[]> {
  return await db.all<CatalogRow>(`SELECT * FROM x402_catalog${opts.includeHidden ? '' : " WHERE status = 'verified'"} ORDER BY lower(name), url`);
}

export async function removeCatalogEntry(db: Store, urlOrId: string): Promise<boolean> {
  return (await db.run('DELETE FROM x402_catalog WHERE url = ? OR entry_id = ?', urlOrId, urlOrId)).changes > 0;
}

