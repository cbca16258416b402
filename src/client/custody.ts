/**
 * What the agent pinned, and the rules that hold a server's answers to it (issue 19, 21.3). The
 * pins live in the profile next to the key share (same 0600 file, same passphrase sealing) and
 * travel in a .wlt export. Pure: no I/O; src/client/pins.ts loads, migrates and saves them.
 *
 * - chain: the USDC mint, treasury and fee payer seen at registration (the known network's mint
 *   wins over the server's word): a later answer naming others gets no share.
 * - fees: the published fee schedule at registration; a fee above what it gives is refused until
 *   the agent accepts a new schedule (--accept-fees / accept_new_fees).
 * - max_amount: the agent's own ceiling for amounts that are not its own words (a paylink, an x402
 *   price, a payment confirmed without the intent this client created).
 * - payees: username → address, pinned on the first payment (trust on first use). A wallet's
 *   address never changes; a merchant's payout change needs --accept-new-address.
 * - x402_hosts: host → payTo, pinned the same way.
 * - intents: what the agent asked for a payment or withdrawal it created, until it signs it.
 */
import { feeFor, formatUsdc, parseUsdc } from '../domain/money.ts';
import { NETWORKS, type NetworkName } from '../solana/networks.ts';
import { CustodyCheckError } from './errors.ts';

export const DEFAULT_MAX_AMOUNT = 100_000_000n;

/** The fee schedule as ping publishes it (decimal USDC, as every API amount). */
export interface FeeSchedule {
  payment_bps: number;
  payment_min: string;
  account_setup_fee: string;
  withdrawal_fee: string;
}

export interface Pin {
  address: string;
  /** wallet: never changes; merchant: a payout change may be accepted; host: an x402 seller. */
  kind: 'wallet' | 'merchant' | 'host';
  first_paid: string;
  last_paid: string;
  count: number;
}

/** What the agent asked for a payment, withdrawal or x402 purchase it created and has not signed yet. */
export interface Intent {
  /** The amount the agent stated. */
  amount?: string;
  /** The agent's ceiling for an amount it did not state. */
  max_amount?: string;
  /** The address the agent named (withdrawals, payments to an address). */
  to_address?: string;
  /** The username the agent named (payments). */
  username?: string;
  /** The x402 seller's host. */
  host?: string;
  accept_new_address?: boolean;
  /** When this client created it (local clock). */
  created_at?: string;
  /** A withdrawal's intent is also recorded under its withdrawal id, with the transaction the server made for it. */
  transaction_id?: string;
}

export interface Pins {
  version: 1;
  pinned_at: string;
  /** How the chain pins were taken: at registration, or on first use by a profile made before pins. */
  source: 'registration' | 'first_use';
  max_amount: string;
  mint: string;
  treasury: string;
  fee_payer: string;
  fees: FeeSchedule;
  payees: Record<string, Pin>;
  x402_hosts: Record<string, Pin>;
  intents: Record<string, Intent>;
}

/** What ping answers (the parts the pins are taken from). */
export interface PingAnswer {
  network: string;
  usdc_mint: string;
  treasury: string;
  fee_payer: string;
  fees: { payment_bps: number; payment_min: number | string; account_setup_fee: number | string; withdrawal_fee: number | string };
}

function scheduleOf(fees: PingAnswer['fees'] | undefined): FeeSchedule {
  const amount = (v: unknown) => {
    const p = parseUsdc(v);
    if (!p.ok && v !== 0 && v !== '0') throw new CustodyCheckError(`the server published an unreadable fee (${String(v)}); nothing was pinned`);
    return formatUsdc(p.ok ? p.micro : 0n);
  };
  if (!fees || !Number.isInteger(fees.payment_bps)) {
    throw new CustodyCheckError('the server publishes no fee schedule (ping has no fees); nothing was pinned', { howToFix: 'Upgrade the daemon: this client pins the fee schedule ping publishes.' });
  }
  return { payment_bps: fees.payment_bps, payment_min: amount(fees.payment_min), account_setup_fee: amount(fees.account_setup_fee), withdrawal_fee: amount(fees.withdrawal_fee) };
}

/** The pins of a new profile (or a migrated one) from ping's answer; a known network's mint wins. */
export function pinsFromPing(network: string, ping: PingAnswer, now: Date, source: Pins['source']): Pins {
  if (!ping.treasury || !ping.fee_payer) throw new CustodyCheckError('the server publishes no treasury or fee payer (ping); nothing was pinned', { howToFix: 'Upgrade the daemon: this client pins the treasury and fee payer ping publishes.' });
  return {
    version: 1,
    pinned_at: now.toISOString(),
    source,
    max_amount: formatUsdc(DEFAULT_MAX_AMOUNT),
    mint: NETWORKS[network as NetworkName]?.defaultUsdcMint ?? ping.usdc_mint,
    treasury: ping.treasury,
    fee_payer: ping.fee_payer,
    fees: scheduleOf(ping.fees),
    payees: {},
    x402_hosts: {},
    intents: {},
  };
}

/** The schedule ping publishes now, for an explicit accept. */
export function acceptSchedule(pins: Pins, ping: PingAnswer): void {
  pins.fees = scheduleOf(ping.fees);
}

export function micro(decimal: unknown): bigint {
  const p = parseUsdc(decimal);
  return p.ok ? p.micro : 0n;
}

/** The most fee the pinned schedule allows: the platform fee (or the withdrawal fee), plus account setup only when the message creates one. */
export function maxFee(fees: FeeSchedule, kind: 'payment' | 'withdrawal', amount: bigint, createsAccount: boolean): bigint {
  const base = kind === 'withdrawal' ? micro(fees.withdrawal_fee) : feeFor(amount, BigInt(fees.payment_bps), micro(fees.payment_min));
  return base + (createsAccount ? micro(fees.account_setup_fee) : 0n);
}

/** Refuses a mint, treasury or fee payer other than the pinned ones. */
export function checkChain(pins: Pins, offered: { mint?: string; treasury?: string; fee_payer?: string }): void {
  for (const [what, key] of [['USDC mint', 'mint'], ['treasury', 'treasury'], ['fee payer', 'fee_payer']] as const) {
    const seen = offered[key];
    if (seen !== undefined && seen !== pins[key]) {
      throw new CustodyCheckError(`refusing to sign: the server now names the ${what} ${seen}; this profile pinned ${pins[key]} at ${pins.pinned_at}`, {
        howToFix: `Do not retry: a server that changes its ${what} after registration may be compromised. Report it to the operator; only a new registration pins another ${what}.`,
        details: { pinned: pins[key], offered: seen },
      });
    }
  }
}

/** The agent's ceiling for an amount it did not state itself. */
export function checkCeiling(pins: Pins, amount: bigint, ceiling: bigint | undefined, what: string): void {
  const max = ceiling ?? micro(pins.max_amount);
  if (amount > max) {
    throw new CustodyCheckError(`refusing to sign: ${what} asks ${formatUsdc(amount)} USDC, above your ceiling of ${formatUsdc(max)} USDC`, {
      howToFix: `Nothing was signed. If you mean to pay ${formatUsdc(amount)} USDC, confirm with --max-amount ${formatUsdc(amount)} (agent-wallet confirm TRANSACTION_ID / x402 fetch; MCP: max_amount), or raise the profile ceiling with "agent-wallet ceiling AMOUNT".`,
      details: { amount: formatUsdc(amount), max_amount: formatUsdc(max) },
    });
  }
}

/**
 * A payee's pin against the address the server offers now: none yet or the same is fine; a
 * wallet's change is always refused; a merchant's (or an x402 host's) only with `accept`.
 */
export function checkPin(pin: Pin | undefined, name: string, offered: string, accept: boolean): void {
  if (!pin || pin.address === offered) return;
  const who = pin.kind === 'host' ? `the x402 host ${name}` : `@${name}`;
  const details = { [pin.kind === 'host' ? 'host' : 'username']: name, pinned_address: pin.address, offered_address: offered };
  if (pin.kind === 'wallet') {
    throw new CustodyCheckError(`refusing to sign: ${who} is a wallet pinned to ${pin.address}, but the server now pays ${offered}; a wallet's address never changes`, {
      howToFix: `Do not retry: the server answered another address for a wallet you paid before. Report it to the operator; if you are sure, pay the address itself, or "agent-wallet payees forget ${name}".`,
      details,
    });
  }
  const flag = pin.kind === 'host' ? '--accept-new-address (MCP: accept_new_address: true) on x402 fetch' : '--accept-new-address (MCP: accept_new_address: true)';
  if (!accept) {
    throw new CustodyCheckError(`refusing to sign: ${who} is pinned to ${pin.address}, but the server now pays ${offered}`, {
      howToFix: `Confirm the new payout address with the payee out of band; if it is theirs, retry with ${flag} to move the pin.`,
      details,
    });
  }
}

/** Records a payment to `name` at `address` (first use pins it; an accepted change moves it). */
export function recordPaid(book: Record<string, Pin>, name: string, address: string, kind: Pin['kind'], now: Date): void {
  const at = now.toISOString();
  const pin = book[name];
  book[name] = pin ? { ...pin, address, last_paid: at, count: pin.count + 1 } : { address, kind, first_paid: at, last_paid: at, count: 1 };
}

/** An unsigned transaction expires on the server after 48 hours; its recorded intent is kept a little longer, then dropped. */
const INTENT_KEEP_MS = 7 * 24 * 60 * 60 * 1000;

/** Records what the agent asked for `id` (stamped with the local time) and drops intents too old to be confirmed. */
export function recordIntent(pins: Pins, id: string, intent: Intent, now: Date): void {
  for (const [key, old] of Object.entries(pins.intents)) {
    if (old.created_at !== undefined && now.getTime() - Date.parse(old.created_at) > INTENT_KEEP_MS) delete pins.intents[key];
  }
  pins.intents[id] = { ...intent, created_at: intent.created_at ?? now.toISOString() };
}

/** The username an agent wrote (`@Alice` → `alice`), or null for an address. */
export function usernameOf(to: string): string | null {
  const raw = to.trim().replace(/^@/, '');
  return raw.length >= 32 ? null : raw.toLowerCase();
}
