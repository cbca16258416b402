/**
 * Exporting a wallet's decision log (DESIGN §9.1). Every commit signs the heads it moved
 * (src/db/decision-log.ts), so the export only adds its own range: it records itself as a
 * decision, then signs what the file holds — the whole log from row 1, or a period — in its last
 * line, so rows cut off either end show. It streams JSONL a page at a time: an `export` header
 * (wallet, address, fee account, period, the log key as a JWK), `row` lines in order, a `head`
 * line after each row a signed head covers, and the signed `end`.
 */
import { bytesToHex } from '@noble/hashes/utils.js';
import { appendDecision, decisionHead, decisionPage, decisionRange, headsBetween } from '../db/decision-log.ts';
import { rangeStatement, type ExportRange } from '../domain/decision-log.ts';
import { getWallet } from '../db/wallets.ts';
import { treasuryOf } from '../payments/message.ts';
import type { Services } from '../services.ts';
import { logKeyOf, signWithLogKey } from './log-key.ts';
import { pagedStream } from './paged-stream.ts';

const PAGE = 500;

/**
 * The export of `walletId`'s log for [fromMs, toMs) (fromMs 0: from row 1; toMs past any date:
 * through the export itself): records the export and signs its range in one transaction, then
 * streams the rows of that range as they were at that moment.
 */
export async function exportDecisionLog(services: Services, walletId: string, actor: string, range: { fromMs: number; toMs: number }): Promise<ReadableStream<Uint8Array>> {
  const now = services.now().getTime();
  const from = range.fromMs > 0 ? new Date(range.fromMs).toISOString() : null;
  const to = range.toMs < 8.64e15 ? new Date(range.toMs).toISOString() : null;
  // The wallet's address and the operator's fee account let verify-log --rpc check each landed payment's parts.
  const address = (await getWallet(services.db, walletId))?.address ?? null;
  const feeAccount: string = treasuryOf(services);
  const key = logKeyOf(services.masterKey);
  const { held, signature } = await services.db
    .transaction(async () => {
      await appendDecision(services.db, { walletId, kind: 'log.exported', data: { actor, from: from ?? 'the first row', to: to ?? 'this export' }, now });
      const found = await decisionRange(services.db, walletId, range, (await decisionHead(services.db, walletId))!.seq);
      const signed: ExportRange = { wallet_id: walletId, address, fee_account: feeAccount, from, to, first_seq: found?.first ?? null, last_seq: found?.last ?? null, hash: found ? bytesToHex(found.hash) : null };
      return { held: signed, signature: signWithLogKey(services.masterKey, rangeStatement(signed)) };
    });
  const header = { type: 'export', wallet_id: walletId, address, fee_account: feeAccount, exported_at: new Date(now).toISOString(), from, to, first_seq: held.first_seq, last_seq: held.last_seq, log_key: key.jwk };
  const end = `${JSON.stringify({ type: 'end', ...held, signed_at: new Date(now).toISOString(), kid: key.kid, signature: Buffer.from(signature).toString('base64url') })}\n`;
  let afterSeq = (held.first_seq ?? 1) - 1;
  let done = false;
  return pagedStream(`${JSON.stringify(header)}\n`, async () => {
    if (done) return null;
    const rows = held.last_seq === null ? [] : await decisionPage(services.db, walletId, afterSeq, held.last_seq, PAGE);
    if (rows.length === 0) {
      done = true;
      return end;
    }
    const heads = new Map((await headsBetween(services.db, walletId, rows[0]!.seq, rows.at(-1)!.seq)).map((h) => [h.seq, h]));
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
