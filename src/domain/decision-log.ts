/**
 * The decision log's rules (DESIGN §9.1), pure so the daemon and `agent-wallet owner verify-log`
 * share them: how a row is hashed, what a signed head states, and the offline check of an
 * export (JSONL: one `export` header, `row` lines in order, `head` lines after the row they sign).
 *
 * A row's hash is sha256(prev_hash ‖ utf8(JSON [wallet_id, seq, at, kind, data])), with `data`
 * the row's JSON text exactly as stored; the first row's prev_hash is 32 zero bytes. A head
 * statement is signed with the daemon's log key (Ed25519): editing, deleting or re-ordering a row
 * breaks the chain at that row, and recomputing the chain breaks every later signed head.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { sha256 } from './sha256.ts';

export const GENESIS_HASH = new Uint8Array(32);

export interface LogRowFields {
  wallet_id: string;
  seq: number;
  at: number;
  kind: string;
  /** The JSON text as stored. */
  data: string;
}

export function rowHash(prev: Uint8Array, r: LogRowFields): Uint8Array {
  return sha256(prev, JSON.stringify([r.wallet_id, r.seq, r.at, r.kind, r.data]));
}

/** The bytes a head signature covers. */
export function headStatement(walletId: string, seq: number, hash: Uint8Array): Uint8Array {
  return utf8ToBytes(`agent-wallet decision-log head v1\n${walletId}\n${seq}\n${bytesToHex(hash)}`);
}

/** What `verify-log` found. */
export interface LogReport {
  ok: boolean;
  wallet_id: string | null;
  rows: number;
  /** The last row a valid head signature covers (0: none). */
  signed_through: number;
  /** Rows after the last signed head: chained, but not vouched for by the key. */
  unsigned_tail: number;
  heads: number;
  /** The first row (or head) that does not check, and why. */
  first_bad: { line: number; seq: number | null; reason: string } | null;
}

const b64url = (s: string) => Uint8Array.from(Buffer.from(s, 'base64url'));

/** Checks an export's lines against `publicKey` (32 bytes). Stops at the first bad line. */
export function verifyLogLines(lines: readonly string[], publicKey: Uint8Array): LogReport {
  const report: LogReport = { ok: false, wallet_id: null, rows: 0, signed_through: 0, unsigned_tail: 0, heads: 0, first_bad: null };
  const hashes = new Map<number, Uint8Array>();
  let prev: Uint8Array | null = null;
  let lastSeq = 0;
  const bad = (line: number, seq: number | null, reason: string): LogReport => ({ ...report, first_bad: { line, seq, reason }, unsigned_tail: Math.max(0, lastSeq - report.signed_through) });
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!.trim();
    if (!text) continue;
    let v: Record<string, any>;
    try {
      v = JSON.parse(text);
    } catch {
      return bad(i + 1, null, 'not JSON');
    }
    if (v.type === 'export') {
      report.wallet_id = typeof v.wallet_id === 'string' ? v.wallet_id : null;
      continue;
    }
    if (v.wallet_id !== report.wallet_id) return bad(i + 1, typeof v.seq === 'number' ? v.seq : null, `a line of wallet ${String(v.wallet_id)} in the export of ${String(report.wallet_id)}`);
    if (v.type === 'row') {
      const seq = v.seq;
      if (!Number.isSafeInteger(seq) || seq < 1) return bad(i + 1, null, 'a row without a valid seq');
      if (prev !== null && seq !== lastSeq + 1) return bad(i + 1, seq, seq > lastSeq + 1 ? `rows ${lastSeq + 1}–${seq - 1} are missing` : `row ${seq} comes after row ${lastSeq}: out of order`);
      let given: Uint8Array;
      let claimedPrev: Uint8Array;
      try {
        given = hexToBytes(String(v.hash));
        claimedPrev = hexToBytes(String(v.prev_hash));
      } catch {
        return bad(i + 1, seq, 'hash or prev_hash is not hex');
      }
      // The first row of an export of a period starts mid-chain: its prev_hash is taken as given
      // and vouched for only by a signed head after it.
      const expectedPrev = prev ?? (seq === 1 ? GENESIS_HASH : claimedPrev);
      if (bytesToHex(claimedPrev) !== bytesToHex(expectedPrev)) return bad(i + 1, seq, `row ${seq}'s prev_hash is not row ${seq - 1}'s hash: a row before it was changed or removed`);
      const computed = rowHash(expectedPrev, { wallet_id: v.wallet_id, seq, at: v.at, kind: v.kind, data: JSON.stringify(v.data) });
      if (bytesToHex(computed) !== bytesToHex(given)) return bad(i + 1, seq, `row ${seq}'s content does not hash to its hash: it was edited`);
      hashes.set(seq, computed);
      prev = computed;
      lastSeq = seq;
      report.rows++;
      continue;
    }
    if (v.type === 'head') {
      const seq = v.seq;
      const at = hashes.get(seq);
      if (!at) return bad(i + 1, seq, `a signed head for row ${String(seq)}, which is not in the export before it`);
      let ok = false;
      try {
        ok = bytesToHex(hexToBytes(String(v.hash))) === bytesToHex(at) && ed25519.verify(b64url(String(v.signature)), headStatement(report.wallet_id!, seq, at), publicKey, { zip215: false });
      } catch {
        ok = false;
      }
      if (!ok) return bad(i + 1, seq, `the signed head at row ${seq} does not match the rows or the log key: the log was rewritten up to row ${seq}`);
      report.heads++;
      report.signed_through = seq;
      continue;
    }
    return bad(i + 1, null, `unknown line type ${String(v.type)}`);
  }
  report.unsigned_tail = Math.max(0, lastSeq - report.signed_through);
  report.ok = report.rows > 0 || report.heads > 0;
  if (!report.ok) report.first_bad = { line: 0, seq: null, reason: 'the export holds no rows' };
  return report;
}
