/**
 * Evidence an owner checks without trusting us (DESIGN §9.1): the log key's public half at
 * `/.well-known/agent-wallet/log-key` (a JWKS any JOSE library reads), and a wallet's exports,
 * streamed a page at a time — its decision log as JSONL (`GET /v1/owner/decision-log`) and its
 * transactions as CSV (`GET /v1/owner/transactions.csv`), each `?wallet_id=…&from=…&to=…` with
 * the owner's token; the dashboard links the same exports under the owner's session.
 */
import { Elysia } from 'elysia';
import { requireOwnerWallet } from '../actions/owner.ts';
import { AppError, invalid } from '../errors.ts';
import { exportTransactionsCsv } from '../evidence/csv-export.ts';
import { exportDecisionLog } from '../evidence/decision-log.ts';
import { logKeyOf } from '../evidence/log-key.ts';
import { signReceipt, slotOf, transactionClaims } from '../evidence/receipts.ts';
import { getTx } from '../db/transactions.ts';
import { ownerWallet } from '../db/owners.ts';
import type { Services } from '../services.ts';
import { currentOwner } from '../web/session.ts';
import { authenticate, credentialOf } from './auth.ts';
import { errorResponse, jsonResponse } from './respond.ts';

type Kind = 'log' | 'csv';

function timeParam(url: URL, name: string, fallback: number): number {
  const v = url.searchParams.get(name);
  if (v === null || v === '') return fallback;
  const ms = Date.parse(v);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v) || !Number.isFinite(ms)) throw invalid(`/${name}`, 'must be an ISO 8601 time such as 2026-01-31T00:00:00Z');
  return ms;
}

/** The export of `walletId` for `ownerId` as a streamed download. */
async function exportResponse(services: Services, ownerId: string, walletId: string, url: URL, kind: Kind): Promise<Response> {
  if (!walletId) throw invalid('/wallet_id', 'is required: the wallet to export');
  const range = { fromMs: timeParam(url, 'from', 0), toMs: timeParam(url, 'to', Number.MAX_SAFE_INTEGER) };
  await requireOwnerWallet(services, ownerId, walletId);
  const [body, type, name] =
    kind === 'log'
      ? [await exportDecisionLog(services, walletId, `owner:${ownerId}`, range), 'application/x-ndjson', `decision-log-${walletId}.jsonl`]
      : [exportTransactionsCsv(services, walletId, range), 'text/csv; charset=utf-8', `transactions-${walletId}.csv`];
  return new Response(body, { headers: { 'content-type': type, 'content-disposition': `attachment; filename="${name}"`, 'cache-control': 'no-store' } });
}

const enveloped = async (run: () => Promise<Response>): Promise<Response> => {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError) return errorResponse(err);
    throw err;
  }
};

export function evidenceRoutes(services: Services) {
  const byToken = (kind: Kind) => ({ request }: { request: Request }) =>
    enveloped(async () => {
      const principal = await authenticate(services.db, credentialOf(request.headers), 'owner');
      if (principal.kind !== 'owner') throw new AppError('UNAUTHORIZED', 'Invalid owner token.');
      const url = new URL(request.url);
      return await exportResponse(services, principal.ownerId, url.searchParams.get('wallet_id') ?? '', url, kind);
    });
  const bySession = (kind: Kind) => ({ request, params }: { request: Request; params: Record<string, string | undefined> }) =>
    enveloped(async () => {
      const session = await currentOwner(services, request);
      if (!session) return new Response(null, { status: 303, headers: { location: '/login' } });
      return await exportResponse(services, session.ownerId, params.wallet_id ?? '', new URL(request.url), kind);
    });
  return new Elysia()
    .get('/.well-known/agent-wallet/log-key', () => jsonResponse(200, { keys: [logKeyOf(services.masterKey).jwk] }))
    .get('/v1/owner/decision-log', byToken('log'))
    .get('/v1/owner/transactions.csv', byToken('csv'))
    .get('/dashboard/wallets/:wallet_id/decision-log.jsonl', bySession('log'))
    .get('/dashboard/wallets/:wallet_id/transactions.csv', bySession('csv'))
    .get('/dashboard/transactions/:transaction_id/receipt.jws', async ({ request, params }) => {
      const session = await currentOwner(services, request);
      if (!session) return new Response(null, { status: 303, headers: { location: '/login' } });
      const tx = await getTx(services.db, params.transaction_id);
      // Another owner's transaction is as unknown as a made-up id.
      const wallet = tx ? await ownerWallet(services.db, session.ownerId, tx.wallet_id) : null;
      if (!tx || !wallet || tx.status !== 'completed') return new Response('No completed transaction with this id among your wallets.\n', { status: 404 });
      const jws = signReceipt(services, transactionClaims(services, tx, wallet, await slotOf(services, tx.signature)));
      return new Response(`${jws}\n`, { headers: { 'content-type': 'application/jose', 'content-disposition': `attachment; filename="receipt-${tx.transaction_id}.jws"`, 'cache-control': 'no-store' } });
    });
}
