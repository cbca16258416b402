/**
 * The money invariants under concurrency, checked against what the CHAIN did (never our ledger's
 * word): read each landed transaction's token movements, then
 * - every landed payment moved exactly amount + fees out of its payer, and its fee transfer is the
 *   platform fee, or the platform fee plus one account-setup fee;
 * - per recipient, setup fees charged ≤ token accounts the service created for it × setup fee
 *   (none for our claimed wallets: the operator creates theirs);
 * - a paylink's reference key is carried by at most one landed payment that paid its payee.
 */
import type { Store } from '../../src/db/store.ts';
import type { Address } from '@solana/kit';
import { usdcAta } from '../../src/solana/ata.ts';
import type { ChainPort } from '../../src/solana/port.ts';

/** A landed payment as the chain shows it. */
export interface Landed {
  signature: string;
  payer: Address;
  recipient: Address;
  /** What the recipient's token account received. */
  amount: bigint;
  /** What left the payer's token account. */
  payerDebit: bigint;
  /** What the treasury's token account received. */
  treasuryCredit: bigint;
}

export interface Recipient {
  address: Address;
  /** Its token account did not exist before the race and exists after: one account was created for it. */
  created: boolean;
  /** One of our claimed wallets: its payers never pay a setup fee. */
  ours: boolean;
}

export interface RaceFacts {
  landed: Landed[];
  recipients: Recipient[];
  /** Per paylink: how many landed transactions carrying its reference key credited its payee. */
  paylinks: { requestId: string; payments: number }[];
}

export interface Rules {
  setupFee: bigint;
  platformFee: (amount: bigint) => bigint;
}

/** Every way `facts` breaks the invariants, as readable lines; empty when they hold. */
export function moneyViolations(facts: RaceFacts, rules: Rules): string[] {
  const out: string[] = [];
  const setupCharged = new Map<string, bigint>();
  for (const t of facts.landed) {
    if (t.payerDebit !== t.amount + t.treasuryCredit) out.push(`${t.signature}: payer paid ${t.payerDebit}, recipient got ${t.amount}, treasury got ${t.treasuryCredit}`);
    const setup = t.treasuryCredit - rules.platformFee(t.amount);
    if (setup !== 0n && setup !== rules.setupFee) out.push(`${t.signature}: fee ${t.treasuryCredit} is neither the platform fee nor it plus one setup fee`);
    setupCharged.set(t.recipient, (setupCharged.get(t.recipient) ?? 0n) + setup);
  }
  for (const r of facts.recipients) {
    const charged = setupCharged.get(r.address) ?? 0n;
    const allowed = r.created && !r.ours ? rules.setupFee : 0n;
    if (charged > allowed) out.push(`${r.address}: setup fees ${charged} charged for ${r.created ? 'one account created' : 'no account created'}${r.ours ? ' (our wallet)' : ''}; at most ${allowed}`);
  }
  for (const p of facts.paylinks) if (p.payments > 1) out.push(`paylink ${p.requestId} paid ${p.payments} times`);
  return out;
}

async function transfersOf(chain: ChainPort, signature: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const t = await chain.getTokenTransfersOf(signature);
    if (t) return t;
    if (Date.now() > deadline) throw new Error(`${signature} is not visible on chain`);
    await Bun.sleep(100);
  }
}

/** Reads a landed payment's token movements from the chain. */
export async function observeLanded(chain: ChainPort, mint: Address, treasury: Address, p: { signature: string; payer: Address; recipient: Address }): Promise<Landed> {
  const t = await transfersOf(chain, p.signature);
  const [payerAta, recipientAta, treasuryAta] = await Promise.all([usdcAta(p.payer, mint), usdcAta(p.recipient, mint), usdcAta(treasury, mint)]);
  const delta = (account: Address) => (t.err === null ? (t.deltas.find((d) => d.account === account && d.mint === mint)?.delta ?? 0n) : 0n);
  return { ...p, amount: delta(recipientAta), payerDebit: -delta(payerAta), treasuryCredit: delta(treasuryAta) };
}

/** How many landed transactions carrying `referenceKey` credited `payee`'s token account. */
export async function observePaylinkPayments(chain: ChainPort, mint: Address, referenceKey: Address, payee: Address): Promise<number> {
  const payeeAta = await usdcAta(payee, mint);
  let payments = 0;
  for (const s of await chain.getSignaturesForAddress(referenceKey)) {
    if (s.err !== null) continue;
    const t = await transfersOf(chain, s.signature);
    if (t.err === null && t.deltas.some((d) => d.account === payeeAta && d.mint === mint && d.delta > 0n)) payments++;
  }
  return payments;
}

/** What the ledger and the chain say about one account after a step. */
export interface Books {
  account: string;
  /** The ledger's word: completed rows (in − out − fees) for our wallets; completed transfers into it for a seller. */
  ledger: bigint;
  /** The chain's word: the balance, or what the account received since the start for a seller. */
  chain: bigint;
}

/** Every account whose ledger and chain disagree after `step`, as readable lines; empty when they agree. */
export function ledgerChainViolations(step: string, books: Books[]): string[] {
  return books.filter((b) => b.ledger !== b.chain).map((b) => `after ${step}: ${b.account} ledger ${b.ledger} ≠ chain ${b.chain}`);
}

/** What the ledger says a wallet holds: completed incoming minus completed outgoing with its fees. */
export async function ledgerBalance(db: Store, walletId: string): Promise<bigint> {
  return (
    (await db
      .get(`SELECT coalesce(sum(CASE WHEN direction = 'in' THEN amount ELSE -(amount + fee + setup_fee) END), 0) AS b FROM transactions WHERE wallet_id = ? AND status = 'completed'`, walletId)) as { b: bigint }
  ).b;
}
