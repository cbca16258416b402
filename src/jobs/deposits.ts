/**
 * The deposit watch (DESIGN §6.1): change first, detail second. Every watched USDC token account —
 * each wallet's, and the payout account of a merchant with watched paylinks — is read in batches
 * of 100 (`getMultipleAccounts` with a data slice on the amount); only an account whose amount
 * moved gets its new signatures looked up. Idle, the watch costs one call per hundred accounts a
 * pass, whatever their number of transactions. A new signature is, in this order: failed (nothing
 * moved), our own outgoing payment (recorded when it completes), already in the wallet's ledger, a
 * Solana Pay payment of a watched paylink (judged by src/earning/scan.ts), or a deposit.
 *
 * An amount can come back to the value last read (1.01 in, 1.00 + 0.01 out within one pass), so
 * the amount alone is not the change marker: a wallet's account is also looked at when one of our
 * own transfers out of it completed since the read (only we sign for a wallet), and a merchant's
 * payout account, which its owner empties at will, gets its newest signature compared with the
 * cursor in turn, one account a pass. A backlog is handled oldest first, so the cursor never
 * moves past a signature not handled, and at most SIGNATURES_PER_PASS of it a pass: the rest waits
 * for the next pass (listed once, kept in memory), so one account's long history — thousands of
 * deposits while the daemon was down, or dust sent to it — does not hold the others' back.
 */
import type { Address } from '@solana/kit';
import { newId } from '../contract/ids.ts';
import { appendEvent } from '../db/events.ts';
import { hasSignature, insertTx, isOwnOutgoing } from '../db/transactions.ts';
import { armFundRequests, armFundRequestsBefore } from '../db/fund-requests.ts';
import { setWatchCursor, setWatchedAmount, setWatchUnread, watchedOwners, type WatchedOwner } from '../db/watch.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { usdcAta } from '../solana/ata.ts';
import { signaturesSince } from '../solana/history.ts';
import type { AddressSignature } from '../solana/port.ts';
import type { Services } from '../services.ts';
import { forgetBalance } from '../payments/balance-cache.ts';
import type { JobDef } from './runner.ts';
import { judgeReferencedTransfer, LATE_WINDOW_MS } from '../earning/scan.ts';
import { fulfilFromDeposit } from '../earning/funding.ts';

/** The default time between passes: an outside deposit shows in the history within a few seconds. */
export const WATCH_INTERVAL_MS = 3_000;
/** Accounts per getMultipleAccounts call (the RPC's limit). */
const ACCOUNTS_PER_CALL = 100;
/** The share of solana.rpc_max_rps the idle watch may use; the rest is for agents and other jobs. */
const WATCH_BUDGET_SHARE = 0.5;
/** A merchant payout account seen for the first time: only this recent history is looked at (its paylinks are newer). */
const FIRST_LOOK_SLACK_MS = 60_000;
/** Signatures of one account handled in a pass (each may cost a transaction lookup). */
export const SIGNATURES_PER_PASS = 500;

const atas = new Map<string, Address>();

async function tokenAccountOf(owner: string, mint: Address): Promise<Address> {
  let ata = atas.get(owner);
  if (ata === undefined) {
    ata = await usdcAta(owner as Address, mint);
    if (atas.size > 100_000) atas.clear();
    atas.set(owner, ata);
  }
  return ata;
}

/** Time between passes: the default, stretched so that the idle watch keeps within its share of the request budget. */
export function watchIntervalMs(accounts: number, maxRps: number): number {
  if (maxRps <= 0) return WATCH_INTERVAL_MS;
  const calls = Math.ceil(accounts / ACCOUNTS_PER_CALL);
  return Math.max(WATCH_INTERVAL_MS, Math.ceil((calls * 1000) / (maxRps * WATCH_BUDGET_SHARE)));
}

/**
 * One pass over every watched account; returns the deposits recorded. Exported for tests. An
 * account's new amount is remembered only once all its new signatures were handled, so a
 * transaction the node does not show yet is looked at again on the next pass.
 */
export async function scanDeposits(services: Services): Promise<number> {
  return (await watchPass(services)).recorded;
}

/** Per daemon: which merchant payout account the next pass probes. */
const probeTurn = new WeakMap<Services, number>();

/**
 * What a pass left of an account's backlog: the signatures newer than `cursor` up to `top`, newest
 * first. The next pass goes on from there and lists only what is newer than `top`. The cursor in
 * SQLite stays the truth: when it is not `cursor` (a restart, a restore), the backlog is listed again.
 */
interface Backlog {
  cursor: string | null;
  top: string;
  rest: AddressSignature[];
}
/** Per daemon: the backlogs left, by owner. */
const backlogs = new WeakMap<Services, Map<string, Backlog>>();

function backlogsOf(services: Services): Map<string, Backlog> {
  let held = backlogs.get(services);
  if (!held) backlogs.set(services, (held = new Map()));
  return held;
}

/** Whether the account may have changed since it was read: never read, another amount, or one of our transfers out since. */
function changed(o: WatchedOwner, amount: bigint | null): boolean {
  return o.checked_at === null || o.amount !== amount || (o.moved_at !== null && o.moved_at >= o.checked_at);
}

async function watchPass(services: Services): Promise<{ recorded: number; accounts: number }> {
  const mint = services.config.usdcMint as Address;
  const owners = await watchedOwners(services.db, services.now().getTime() - LATE_WINDOW_MS);
  const held = backlogsOf(services);
  if (held.size > 0) {
    const watched = new Set(owners.map((o) => o.owner));
    for (const owner of held.keys()) if (!watched.has(owner)) held.delete(owner);
  }
  const accounts = await Promise.all(owners.map((o) => tokenAccountOf(o.owner, mint)));
  // Read before the amounts: a transfer of ours completing after this is newer than the read.
  const readAt = services.now().getTime();
  const { amounts, slot } = await services.chain.getTokenAmounts(accounts);
  const merchants = owners.flatMap((o, i) => (o.wallet_id === null && !changed(o, amounts[i] ?? null) ? [i] : []));
  const turn = probeTurn.get(services) ?? 0;
  probeTurn.set(services, turn + 1);
  const probe = merchants.length > 0 ? merchants[turn % merchants.length]! : -1;
  let recorded = 0;
  for (const [i, o] of owners.entries()) {
    const amount = amounts[i] ?? null;
    if (!changed(o, amount) && (i !== probe || !(await newerThanCursor(services, o, accounts[i]!, slot)))) continue;
    const outcome = await handleNewSignatures(services, o, accounts[i]!, mint, slot);
    recorded += outcome.recorded;
    if (outcome.complete) await services.db.transaction(async () => await setWatchedAmount(services.db, o.owner, amount, readAt));
    else await services.db.transaction(async () => await setWatchUnread(services.db, o.owner, services.now().getTime()));
  }
  return { recorded, accounts: owners.length };
}

/** The account's newest signature is not the cursor: something happened that its amount does not show. */
async function newerThanCursor(services: Services, o: WatchedOwner, account: Address, readAt: bigint): Promise<boolean> {
  const [newest] = await services.chain.getSignaturesForAddress(account, { limit: 1, minContextSlot: readAt });
  return newest !== undefined && newest.signature !== o.last_signature;
}

/**
 * The account's signatures to handle, newest first, and the newest listed (a first look may leave
 * older ones out). From a view at or past the slot the amounts were read at: a node whose signature
 * index trails (or another endpoint behind it) must not answer "nothing new" for a change it has
 * not indexed yet.
 */
async function newSignatures(services: Services, o: WatchedOwner, account: Address, readAt: bigint): Promise<{ sigs: AddressSignature[]; newest: AddressSignature | undefined }> {
  const held = backlogsOf(services).get(o.owner);
  if (held && held.cursor === o.last_signature) {
    const sigs = [...(await signaturesSince(services.chain, account, held.top, { minContextSlot: readAt })), ...held.rest];
    return { sigs, newest: sigs[0] };
  }
  // A merchant's payout account may have a long history before its first paylink: none of it can
  // pay one, so its first look reads back only to then.
  const since = o.last_signature === null && o.wallet_id === null && o.paylinks_since !== null ? (Number(o.paylinks_since) - FIRST_LOOK_SLACK_MS) / 1000 : null;
  const listed = await signaturesSince(services.chain, account, o.last_signature ?? undefined, { minContextSlot: readAt, ...(since !== null && { notBefore: since }) });
  const sigs = since === null ? listed : listed.filter((s) => s.blockTime === null || Number(s.blockTime) >= since);
  return { sigs, newest: listed[0] };
}

async function handleNewSignatures(services: Services, o: WatchedOwner, account: Address, mint: Address, readAt: bigint): Promise<{ recorded: number; complete: boolean }> {
  const { sigs, newest } = await newSignatures(services, o, account, readAt);
  const held = backlogsOf(services);
  held.delete(o.owner);
  let recorded = 0;
  // Oldest first, so the cursor only moves past what was handled.
  const oldestFirst = [...sigs].reverse();
  for (const [n, s] of oldestFirst.entries()) {
    if (n === SIGNATURES_PER_PASS) {
      held.set(o.owner, { cursor: oldestFirst[n - 1]!.signature, top: sigs[0]!.signature, rest: sigs.slice(0, sigs.length - n) });
      return { recorded, complete: false };
    }
    const skip = s.err !== null || (await isOwnOutgoing(services.db, s.signature)) || (o.wallet_id !== null && (await hasSignature(services.db, o.wallet_id, s.signature)));
    if (!skip) {
      const transfers = await services.chain.getTokenTransfersOf(s.signature);
      if (!transfers && !givenUp(services, s.signature)) return { recorded, complete: false };
      if (!transfers) {
        await moveCursor(services, o, s);
        continue;
      }
      if (!(await judgeReferencedTransfer(services, { address: o.owner, tokenAccount: account }, s.signature, transfers)) && o.wallet_id !== null) {
        if (await recordDeposit(services, o.wallet_id, o.owner, account, mint, s, transfers.deltas)) recorded++;
        continue;
      }
    }
    await moveCursor(services, o, s);
  }
  // Older history left out of a first look: the cursor still moves to the newest listed, so the probe does not find it new again.
  if (sigs.length === 0 && newest !== undefined) await moveCursor(services, o, newest);
  return { recorded, complete: true };
}

/** Moves the cursor past a handled signature; a wallet's fund requests it shows were asked before are armed with it. */
async function moveCursor(services: Services, o: WatchedOwner, s: AddressSignature): Promise<void> {
  const now = services.now().getTime();
  await services.db
    .transaction(async () => {
      await setWatchCursor(services.db, o.owner, s.signature, now);
      if (o.wallet_id === null) return;
      await armFundRequestsBefore(services.db, o.wallet_id, s.slot, now);
      await armFundRequests(services.db, o.wallet_id, s.signature, now);
    });
}

/** Passes a listed signature may come back without its transaction before the watch moves past it. */
const MAX_MISSING_PASSES = 20;
const missing = new Map<string, number>();

/**
 * A node that lists a signature but never serves its transaction (a provider without that history)
 * must not hold the account's later deposits back forever: after MAX_MISSING_PASSES the watch
 * moves past it and says so.
 */
function givenUp(services: Services, signature: string): boolean {
  const passes = (missing.get(signature) ?? 0) + 1;
  if (passes < MAX_MISSING_PASSES) {
    if (missing.size > 10_000) missing.clear();
    missing.set(signature, passes);
    return false;
  }
  missing.delete(signature);
  services.log.warn('deposit watch: the RPC lists a transaction it does not serve; moving past it', { signature, passes });
  return true;
}

/**
 * Records USDC credited to the wallet's token account as a deposit, once, with its event and
 * fund-request fulfilment; moves the cursor in the same transaction. Requests asked when this was
 * the wallet's newest transaction are armed after it is handled: it was there before them.
 */
async function recordDeposit(
  services: Services,
  walletId: string,
  address: string,
  account: Address,
  mint: Address,
  s: AddressSignature,
  deltas: { account: string; mint: string; owner: string; delta: bigint }[],
): Promise<boolean> {
  const { signature } = s;
  const mine = deltas.find((d) => d.account === account && d.mint === mint);
  const payer = deltas.find((d) => d.mint === mint && d.delta < 0n);
  const now = services.now().getTime();
  return await services.db
    .transaction(async () => {
      await setWatchCursor(services.db, address, signature, now);
      const credited = mine !== undefined && mine.delta > 0n && !(await hasSignature(services.db, walletId, signature));
      // Money of a slot after a request's newest transaction came after the request: it counts.
      await armFundRequestsBefore(services.db, walletId, s.slot, now);
      if (credited) {
        const id = newId('transaction');
        forgetBalance(address);
        await insertTx(services.db, { transaction_id: id, wallet_id: walletId, type: 'deposit', direction: 'in', status: 'completed', amount: mine.delta, counterparty: payer?.owner ?? null, signature, completed_at: now, now });
        await appendEvent(services.db, { walletId, type: 'payment.received', data: { transaction_id: id, amount: toUsdcNumber(mine.delta), from: payer?.owner ?? null, signature, kind: 'deposit' }, now });
        await fulfilFromDeposit(services, walletId, mine.delta, id, now);
      }
      await armFundRequests(services.db, walletId, signature, now);
      return credited;
    });
}

/**
 * The job ticks every second and runs a pass when one is due: every WATCH_INTERVAL_MS, or less
 * often when solana.rpc_max_rps is too small for the number of accounts (the stretch is logged).
 */
/** The chain watch's job name (its lease on a shared ledger: leaseOf(DEPOSIT_JOB)). */
export const DEPOSIT_JOB = 'deposits';

export function depositJob(services: Services): JobDef {
  let nextAt = 0;
  let loggedInterval = WATCH_INTERVAL_MS;
  return {
    name: DEPOSIT_JOB,
    schedule: { everySeconds: 1 },
    runAtStart: true,
    // One node watches the chain (DESIGN §10.2): its passes would only repeat each other's calls.
    singleton: true,
    run: async () => {
      const started = Date.now();
      if (started < nextAt) return;
      const { accounts } = await watchPass(services);
      const interval = watchIntervalMs(accounts, services.config.rpcMaxRps);
      if (interval !== loggedInterval) {
        services.log.warn('deposit watch cadence stretched', { interval_ms: interval, accounts, rpc_max_rps: services.config.rpcMaxRps });
        loggedInterval = interval;
      }
      nextAt = started + interval;
    },
  };
}
