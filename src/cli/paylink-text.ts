/**
 * A paylink as a person reads it in a terminal: what it is for, its items as a short table with
 * the total, where to pay it, and what happened to it. `--json` prints the API's object instead.
 */

type Data = Record<string, unknown>;

interface Item {
  description: string;
  price: number;
  quantity: number;
  total: number;
}

/** A USDC amount with at least two decimals (2.5 → 2.50, 0.000001 stays whole). */
export function usdcText(value: unknown): string {
  if (typeof value !== 'number') return '-';
  const [whole, frac = ''] = value.toFixed(6).split('.');
  const trimmed = frac.replace(/0+$/, '');
  return `${whole}.${trimmed.padEnd(2, '0')}`;
}

/** The items as aligned columns, with the total in USDC under them. */
export function itemsTable(items: Item[], total: unknown): string[] {
  const rows = items.map((i) => [i.description, String(i.quantity), usdcText(i.price), usdcText(i.total)]);
  const all = [['Item', 'Qty', 'Price', 'Total'], ...rows, ['Total', '', '', usdcText(total)]];
  const width = (col: number) => Math.max(...all.map((r) => r[col]!.length));
  const line = (r: string[]) => `  ${r[0]!.padEnd(width(0))}  ${r[1]!.padStart(width(1))}  ${r[2]!.padStart(width(2))}  ${r[3]!.padStart(width(3))}`.trimEnd();
  const lines = all.map(line);
  lines[lines.length - 1] += ' USDC';
  return lines;
}

/** The paylink's status in words, with who paid, how much and when. */
function statusLine(p: Data): string {
  if (p.status === 'paid') {
    const via = p.paid_via ? ` via ${String(p.paid_via)}` : '';
    const by = p.payer ? ` by ${String(p.payer)}` : '';
    return `paid ${usdcText(p.paid_amount)} USDC${by}${via} at ${String(p.paid_at)}`;
  }
  if (p.status === 'open') return `open until ${String(p.expires_at)}`;
  return String(p.status);
}

/** The lines `request create` and `request get` print without --json. */
export function paylinkText(p: Data, headline: string): string[] {
  const items = Array.isArray(p.items) ? (p.items as Item[]) : [];
  const lines = [headline, `  ${String(p.description)}`];
  if (items.length) lines.push(...itemsTable(items, p.amount));
  else lines.push(`  Amount: ${p.amount === null ? 'any (the payer chooses)' : `${usdcText(p.amount)} USDC`}`);
  const field = (label: string, value: unknown) => {
    if (value !== null && value !== undefined && value !== '') lines.push(`${`${label}:`.padEnd(12)}${String(value)}`);
  };
  field('Status', statusLine(p));
  field('Reference', p.reference);
  field('Link', p.url);
  // A wallet app pays this; once the paylink is no longer open it would only be refused.
  if (p.status === 'open') field('Solana Pay', p.solana_pay_url);
  field('Signature', p.signature);
  const rejected = Array.isArray(p.rejected_payments) ? (p.rejected_payments as Data[]) : [];
  for (const r of rejected) field('Rejected', `${r.amount === null ? String(r.raw_amount) : `${usdcText(r.amount)} USDC`} from ${String(r.payer)}: ${String(r.explanation)} (${String(r.signature)})`);
  field('Next', p.next_step);
  return lines;
}
