/**
 * Evidence an owner checks without trusting us (DESIGN §9.1): the log key's public half at
 * `/.well-known/agent-wallet/log-key` (a JWKS any JOSE library reads), and a wallet's decision
 * log as JSONL at `GET /v1/owner/decision-log?wallet_id=…&from=…&to=…` with the owner's token,
 * streamed a page at a time.
 */
import { Elysia } from 'elysia';
import { requireOwnerWallet } from '../actions/owner.ts';
import { AppError, invalid } from '../errors.ts';
import { exportDecisionLog } from '../evidence/decision-log.ts';
import { logKeyOf } from '../evidence/log-key.ts';
import type { Services } from '../services.ts';
import { authenticate, credentialOf } from './auth.ts';
import { errorResponse, jsonResponse } from './respond.ts';

function timeParam(url: URL, name: string, fallback: number): number {
  const v = url.searchParams.get(name);
  if (v === null || v === '') return fallback;
  const ms = Date.parse(v);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v) || !Number.isFinite(ms)) throw invalid(`/${name}`, 'must be an ISO 8601 time such as 2026-01-31T00:00:00Z');
  return ms;
}

export function evidenceRoutes(services: Services) {
  return new Elysia()
    .get('/.well-known/agent-wallet/log-key', () => jsonResponse(200, { keys: [logKeyOf(services.masterKey).jwk] }))
    .get('/v1/owner/decision-log', ({ request }) => {
      try {
        const principal = authenticate(services.db, credentialOf(request.headers), 'owner');
        if (principal.kind !== 'owner') throw new AppError('UNAUTHORIZED', 'Invalid owner token.');
        const url = new URL(request.url);
        const walletId = url.searchParams.get('wallet_id') ?? '';
        if (!walletId) throw invalid('/wallet_id', 'is required: the wallet whose log to export');
        const range = { fromMs: timeParam(url, 'from', 0), toMs: timeParam(url, 'to', Number.MAX_SAFE_INTEGER) };
        requireOwnerWallet(services, principal.ownerId, walletId);
        return new Response(exportDecisionLog(services, walletId, `owner:${principal.ownerId}`, range), {
          headers: { 'content-type': 'application/x-ndjson', 'content-disposition': `attachment; filename="decision-log-${walletId}.jsonl"`, 'cache-control': 'no-store' },
        });
      } catch (err) {
        if (err instanceof AppError) return errorResponse(err);
        throw err;
      }
    });
}
