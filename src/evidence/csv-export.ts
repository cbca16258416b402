/**
 * A wallet's transactions as CSV for the owner's books (DESIGN §9.1): date, type, direction,
 * counterparty, amount, fee, status, signature, memo, reference, transaction id; amounts in USDC
 * decimals (exact, from integers). Streamed a page at a time with a keyset cursor, so memory stays
 * bounded whatever the count. A cell a spreadsheet would run as a formula (=, +, -, @, tab, CR at
 * its start: counterparties and memos come from outside) is prefixed with an apostrophe.
 */
import { walletTxExportPage, type TxExportCursor, type TxRow } from '../db/transactions.ts';
import { formatUsdc } from '../domain/money.ts';
import type { Services } from '../services.ts';
import { pagedStream } from './paged-stream.ts';

const PAGE = 1000;
const HEADER = 'date,type,direction,counterparty,amount,fee,status,signature,memo,reference,transaction_id\r\n';

/** One CSV cell (RFC 4180), defused against spreadsheet formulas. */
export function csvCell(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function exportTransactionsCsv(services: Services, walletId: string, range: { fromMs: number; toMs: number }): ReadableStream<Uint8Array> {
  let after: TxExportCursor | null = null;
  return pagedStream(HEADER, async () => {
    const { rows, next } = await walletTxExportPage(services.db, walletId, after, range, PAGE);
    if (rows.length === 0) return null;
    after = next;
    return rows.map(csvLine).join('');
  });
}

function csvLine(t: TxRow): string {
  const fee = t.direction === 'out' ? t.fee + t.setup_fee : 0n;
  const cells = [
    new Date(Number(t.created_at)).toISOString(),
    t.type,
    t.direction,
    csvCell(t.counterparty ?? t.to_address),
    formatUsdc(t.amount),
    formatUsdc(fee),
    t.status,
    csvCell(t.signature),
    csvCell(t.note),
    csvCell(t.reference),
    t.transaction_id,
  ];
  return `${cells.join(',')}\r\n`;
}
