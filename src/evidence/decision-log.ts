/**
 * Signing decision-log heads and exporting a wallet's log (DESIGN §9.1). Heads are signed by a job
 * every ten minutes for every wallet whose chain moved, and at each export (the export is itself
 * a logged decision, and the file ends at a signed head). The export streams JSONL a page at a
 * time: an `export` header (wallet, period, the log key as a JWK), `row` lines in order and a
 * `head` line after each row a signed head covers.
 */
import { bytesToHex } from '@noble/hashes/utils.js';
import { appendDecision, decisionHead, decisionPage, headsBetween, insertHead, unsignedHeads, type DecisionRow } from '../db/decision-log.ts';
import { headStatement } from '../domain/decision-log.ts';
import { getWallet } from '../db/wallets.ts';
import type { JobDef } from '../jobs/runner.ts';
import type { Services } from '../services.ts';
import { logKeyOf, signWithLogKey } from './log-key.ts';
import { pagedStream } from './paged-stream.ts';

const PAGE = 500;

function signHead(services: Services, row: DecisionRow, now: number): void {
  const signature = signWithLogKey(services.masterKey, headStatement(row.wallet_id, row.seq, row.hash));
  insertHead(services.db, { wallet_id: row.wallet_id, seq: row.seq, hash: row.hash, signed_at: now, signature });
}

/** Signs the head of every wallet whose chain moved since its last signed head; returns how many. */
export function signMovedHeads(services: Services): number {
  let signed = 0;
  for (;;) {
    const rows = unsignedHeads(services.db, PAGE);
    if (rows.length === 0) return signed;
    const now = services.now().getTime();
    services.db.transaction(() => rows.forEach((r) => signHead(services, r, now))).immediate();
    signed += rows.length;
  }
}

export function decisionLogJobs(services: Services): JobDef[] {
  return [{ name: 'decision-log-heads', schedule: { everySeconds: 600 }, run: async () => void signMovedHeads(services) }];
}

/**
 * The export of `walletId`'s log for [fromMs, toMs): records the export as a decision and signs
 * the head in one transaction, then streams the rows of the period that were there at that moment
 * (a period that ends before now may end on an unsigned tail, which verify-log reports).
 */
export function exportDecisionLog(services: Services, walletId: string, actor: string, range: { fromMs: number; toMs: number }): ReadableStream<Uint8Array> {
  const now = services.now().getTime();
  const head = services.db
    .transaction(() => {
      appendDecision(services.db, { walletId, kind: 'log.exported', data: { actor, from: new Date(range.fromMs).toISOString(), to: new Date(Math.min(range.toMs, 8.64e15)).toISOString() }, now });
      const h = decisionHead(services.db, walletId)!;
      signHead(services, h, now);
      return h;
    })
    .immediate();
  const key = logKeyOf(services.masterKey);
  // The wallet's address lets verify-log --rpc find its token balances in each landed transaction.
  const address = getWallet(services.db, walletId)?.address ?? null;
  const header = { type: 'export', wallet_id: walletId, address, exported_at: new Date(now).toISOString(), from: new Date(range.fromMs).toISOString(), head_seq: head.seq, log_key: key.jwk };
  let afterSeq = 0;
  return pagedStream(`${JSON.stringify(header)}\n`, () => {
    const rows = decisionPage(services.db, walletId, afterSeq, PAGE, range).filter((r) => r.seq <= head.seq);
    if (rows.length === 0) return null;
    const heads = new Map(headsBetween(services.db, walletId, rows[0]!.seq, rows.at(-1)!.seq).map((h) => [h.seq, h]));
    afterSeq = rows.at(-1)!.seq;
    let out = '';
    for (const r of rows) {
      out += `${JSON.stringify({ type: 'row', wallet_id: r.wallet_id, seq: r.seq, at: r.at, time: new Date(r.at).toISOString(), kind: r.kind, data: JSON.parse(r.data), prev_hash: bytesToHex(r.prev_hash), hash: bytesToHex(r.hash) })}\n`;
      const h = heads.get(r.seq);
      if (h) out += `${JSON.stringify({ type: 'head', wallet_id: h.wallet_id, seq: h.seq, hash: bytesToHex(h.hash), signed_at: new Date(h.signed_at).toISOString(), kid: key.kid, signature: Buffer.from(h.signature).toString('base64url') })}\n`;
    }
    return out;
  });
}
