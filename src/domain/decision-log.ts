/**
 * The decision log's rules (DESIGN §9.1), pure so the daemon and `agent-wallet owner verify-log`
 * share them: how a row is hashed, what a signed head and an export's signed range state, and the
 * offline check of an export (JSONL: one `export` header, `row` lines in order, a `head` line after
 * each row a signed head covers, and an `end` line signing the export's range).
 *
 * A row's hash is sha256(prev_hash ‖ utf8(JSON [wallet_id, seq, at, kind, data])), with `data`
 * the row's JSON text exactly as stored; the first row's prev_hash is 32 zero bytes. Every commit
 * signs the head of each wallet it moved with the daemon's log key (Ed25519): editing, deleting or
 * re-ordering a row breaks the chain at that row, and recomputing the chain breaks the heads after.
 * The `end` line binds what the file claims to hold (the whole log from row 1, or a period) so
 * rows cut off its start are caught too.
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

/**
 * What an export holds, signed in its `end` line: `from` null is the whole log from row 1 (a time:
 * the rows from that time on), `to` null runs through the export itself; `address` and
 * `fee_account` are what `verify-log --rpc` checks the chain against. first_seq and last_seq are
 * null (and `hash` too) for a period without rows.
 */
export interface ExportRange {
  wallet_id: string;
  address: string | null;
  fee_account: string | null;
  from: string | null;
  to: string | null;
  first_seq: number | null;
  last_seq: number | null;
  /** The last row's hash, hex. */
  hash: string | null;
}

/** The bytes an export's `end` signature covers. */
export function rangeStatement(r: ExportRange): Uint8Array {
  return utf8ToBytes(`agent-wallet decision-log export v1\n${JSON.stringify([r.wallet_id, r.address, r.fee_account, r.from, r.to, r.first_seq, r.last_seq, r.hash])}`);
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
  /**
   * `whole`: rows 1 to the signed end; `partial`: a period the signed end names (rows before or
   * after it were not checked); `cut`: no signed end (a file cut short, or an older release's
   * export), so rows after the last signed head may have been removed.
   */
  coverage: 'whole' | 'partial' | 'cut';
  /** The export's signed range, or null without a valid `end` line. */
  range: { from: string | null; to: string | null; first_seq: number | null; last_seq: number | null } | null;
  /** The first row (or head) that does not check, and why. */
  first_bad: { line: number; seq: number | null; reason: string } | null;
}

const b64url = (s: string) => Uint8Array.from(Buffer.from(s, 'base64url'));

function signedBy(signature: unknown, statement: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return ed25519.verify(b64url(String(signature)), statement, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

const orNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const seqOrNull = (v: unknown): number | null => (Number.isSafeInteger(v) ? (v as number) : null);

/** Checks an export's lines against `publicKey` (32 bytes). Stops at the first bad line. */
export function verifyLogLines(lines: readonly string[], publicKey: Uint8Array): LogReport {
  const report: LogReport = { ok: false, wallet_id: null, rows: 0, signed_through: 0, unsigned_tail: 0, heads: 0, coverage: 'cut', range: null, first_bad: null };
  const hashes = new Map<number, Uint8Array>();
  let header: Record<string, any> | null = null;
  let prev: Uint8Array | null = null;
  let firstSeq = 0;
  let lastSeq = 0;
  let ended = false;
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
    if (ended) return bad(i + 1, seqOrNull(v.seq), "a line after the export's signed end");
    if (v.type === 'export') {
      header = v;
      report.wallet_id = typeof v.wallet_id === 'string' ? v.wallet_id : null;
      continue;
    }
    if (v.wallet_id !== report.wallet_id) return bad(i + 1, seqOrNull(v.seq), `a line of wallet ${String(v.wallet_id)} in the export of ${String(report.wallet_id)}`);
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
      // A file may start mid-chain only as a period its signed end names (checked there): its
      // first prev_hash is taken as given, and the end's signature covers it through the chain.
      const expectedPrev = prev ?? (seq === 1 ? GENESIS_HASH : claimedPrev);
      if (bytesToHex(claimedPrev) !== bytesToHex(expectedPrev)) return bad(i + 1, seq, `row ${seq}'s prev_hash is not row ${seq - 1}'s hash: a row before it was changed or removed`);
      const computed = rowHash(expectedPrev, { wallet_id: v.wallet_id, seq, at: v.at, kind: v.kind, data: JSON.stringify(v.data) });
      if (bytesToHex(computed) !== bytesToHex(given)) return bad(i + 1, seq, `row ${seq}'s content does not hash to its hash: it was edited`);
      hashes.set(seq, computed);
      if (prev === null) firstSeq = seq;
      prev = computed;
      lastSeq = seq;
      report.rows++;
      continue;
    }
    if (v.type === 'head') {
      const seq = v.seq;
      const at = hashes.get(seq);
      if (!at) return bad(i + 1, seq, `a signed head for row ${String(seq)}, which is not in the export before it`);
      const ok = String(v.hash) === bytesToHex(at) && signedBy(v.signature, headStatement(report.wallet_id!, seq, at), publicKey);
      if (!ok) return bad(i + 1, seq, `the signed head at row ${seq} does not match the rows or the log key: the log was rewritten up to row ${seq}`);
      report.heads++;
      report.signed_through = seq;
      continue;
    }
    if (v.type === 'end') {
      const range: ExportRange = { wallet_id: report.wallet_id!, address: orNull(v.address), fee_account: orNull(v.fee_account), from: orNull(v.from), to: orNull(v.to), first_seq: seqOrNull(v.first_seq), last_seq: seqOrNull(v.last_seq), hash: orNull(v.hash) };
      const held = report.rows === 0 ? { first_seq: null, last_seq: null, hash: null } : { first_seq: firstSeq, last_seq: lastSeq, hash: bytesToHex(prev!) };
      if (!signedBy(v.signature, rangeStatement(range), publicKey)) return bad(i + 1, null, "the export's signed range does not match its signature or the log key: the range or the key was changed");
      if (range.first_seq !== null && held.first_seq !== null && range.first_seq < held.first_seq) {
        return bad(i + 1, held.first_seq, `rows ${range.first_seq}–${held.first_seq - 1} are missing: the export's signed range starts at row ${range.first_seq}, the file at row ${held.first_seq}`);
      }
      if (range.last_seq !== null && held.last_seq !== null && range.last_seq > held.last_seq) {
        return bad(i + 1, held.last_seq, `rows ${held.last_seq + 1}–${range.last_seq} are missing: the export's signed range ends at row ${range.last_seq}, the file at row ${held.last_seq}`);
      }
      if (range.first_seq !== held.first_seq || range.last_seq !== held.last_seq || range.hash !== held.hash) {
        return bad(i + 1, held.last_seq, `the export's signed range is rows ${range.first_seq ?? '(none)'}–${range.last_seq ?? '(none)'} ending at another hash than the file's rows ${held.first_seq ?? '(none)'}–${held.last_seq ?? '(none)'}: rows were changed`);
      }
      if (header && (orNull(header.address) !== range.address || orNull(header.fee_account) !== range.fee_account || orNull(header.from) !== range.from || orNull(header.to) !== range.to)) {
        return bad(i + 1, null, "the export header's address, fee account or period is not the one its signed range names");
      }
      report.range = { from: range.from, to: range.to, first_seq: range.first_seq, last_seq: range.last_seq };
      if (report.rows > 0) report.signed_through = lastSeq;
      ended = true;
      continue;
    }
    return bad(i + 1, null, `unknown line type ${String(v.type)}`);
  }
  // Rows missing at the start are told from a period only by a signed range that says so.
  if (report.rows > 0 && firstSeq > 1 && (!report.range || report.range.from === null)) {
    return bad(0, firstSeq, `the file starts at row ${firstSeq} but ${report.range ? 'its signed range is the whole log' : 'no signed range says it is a period'}: rows 1–${firstSeq - 1} are missing`);
  }
  report.unsigned_tail = Math.max(0, lastSeq - report.signed_through);
  report.coverage = !report.range ? 'cut' : firstSeq === 1 && report.range.to === null ? 'whole' : 'partial';
  report.ok = report.rows > 0 || report.range !== null;
  if (!report.ok) report.first_bad = { line: 0, seq: null, reason: 'the export holds no rows' };
  return report;
}
