/**
 * Makes a payee payable by any Solana Pay wallet before its paylink is handed out (DESIGN §8):
 * the official `@solana/pay` client refuses a recipient whose system account does not exist or
 * that has no USDC token account. A wallet address is a FROST group key that never holds SOL, so
 * the operator's fee payer funds it with the rent-exempt minimum and creates its USDC token account
 * (idempotent), in one transaction it signs alone, with a measured compute budget and the current
 * priority fee like every message the daemon builds.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { AccountRole, type Address, type Instruction } from '@solana/kit';
import { getTransferSolInstructionDataEncoder } from '@solana-program/system';
import { usdcAta, usdcAtaBump } from '../solana/ata.ts';
import { AppError } from '../errors.ts';
import { ChainRejectedError } from '../solana/errors.ts';
import {
  computeUnitLimitInstruction,
  computeUnitPriceInstruction,
  createAtaIdempotentInstruction,
  createAtaUnits,
  CU_BUDGET,
  SYSTEM_PROGRAM_ADDRESS,
} from '../solana/instructions.ts';
import { currentPriorityFee } from '../payments/priority-fee.ts';
import { REBROADCAST_MS } from '../payments/settle.ts';
import { assembleSignedTransaction, compileMessage, transactionSignature } from '../solana/transfer.ts';
import type { Services } from '../services.ts';
import { getWalletByAddress } from '../db/wallets.ts';

/** Rent-exempt minimum of an account with no data: (128 bytes of overhead) × 3480 lamports/byte-year × 2 years. */
export const RENT_EXEMPT_EMPTY_ACCOUNT = 890_880n;

/** How long to wait for the setup transaction to be seen by the cluster. */
const CONFIRM_TIMEOUT_MS = 15_000;

/** Our wallets known to be ready (account + USDC token account): only the wallet's signature could close them, and we never build that message. */
const ready = new Set<string>();
const inFlight = new Map<string, Promise<void>>();

/**
 * Ensures `owner` exists on chain and has its USDC token account, paying from the fee payer when
 * something is missing. Concurrent calls for one owner share one setup. Throws the chain errors
 * (ChainUnavailableError → SERVICE_UNAVAILABLE at the API).
 */
export function ensurePayeeReady(services: Services, owner: Address): Promise<void> {
  const key = `${services.config.usdcMint}:${owner}`;
  if (ready.has(key)) return Promise.resolve();
  let pending = inFlight.get(key);
  if (!pending) {
    pending = setUp(services, owner)
      .then(async () => {
        // A merchant's payout account may be closed by its owner at any time: only our wallets' are remembered.
        if ((await getWalletByAddress(services.db, owner)) === null) return;
        if (ready.size > 100_000) ready.clear();
        ready.add(key);
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  return pending;
}

/**
 * The setup message's instructions: compute budget (measured, instructions.ts; the token account's
 * creation budgeted for its bump seed `ataBump`), rent for the account, its token account.
 */
export function payeeSetupInstructions(p: {
  feePayer: Address;
  owner: Address;
  ata: Address;
  ataBump: number;
  mint: Address;
  fundAccount: boolean;
  createTokenAccount: boolean;
  price: bigint;
}): Instruction[] {
  const limit = CU_BUDGET.computeBudget + (p.fundAccount ? CU_BUDGET.systemTransfer : 0) + (p.createTokenAccount ? createAtaUnits(p.ataBump) : 0);
  const instructions: Instruction[] = [computeUnitLimitInstruction(limit), computeUnitPriceInstruction(p.price)];
  if (p.fundAccount) {
    instructions.push({
      programAddress: SYSTEM_PROGRAM_ADDRESS,
      accounts: [
        { address: p.feePayer, role: AccountRole.WRITABLE_SIGNER },
        { address: p.owner, role: AccountRole.WRITABLE },
      ],
      data: getTransferSolInstructionDataEncoder().encode({ amount: RENT_EXEMPT_EMPTY_ACCOUNT }),
    });
  }
  if (p.createTokenAccount) instructions.push(createAtaIdempotentInstruction({ payer: p.feePayer, ata: p.ata, owner: p.owner, mint: p.mint }));
  return instructions;
}

async function setUp(services: Services, owner: Address): Promise<void> {
  const mint = services.config.usdcMint as Address;
  const feePayer = services.feePayer.address;
  const [accountExists, tokenAccountExists] = await Promise.all([services.chain.accountExists(owner), services.chain.tokenAccountExists(owner, mint)]);
  if (accountExists && tokenAccountExists) return;
  const [ata, ataBump] = await Promise.all([usdcAta(owner, mint), usdcAtaBump(owner, mint)]);
  const [blockhash, price] = await Promise.all([services.chain.getLatestBlockhash(), currentPriorityFee(services, [owner, ata])]);
  const instructions = payeeSetupInstructions({ feePayer, owner, ata, ataBump, mint, fundAccount: !accountExists, createTokenAccount: !tokenAccountExists, price });
  const messageBytes = compileMessage(feePayer, blockhash, instructions);
  const wire = assembleSignedTransaction(messageBytes, { [feePayer]: ed25519.sign(messageBytes, services.feePayer.keypairBytes.subarray(0, 32)) });
  const signature = transactionSignature(wire);
  try {
    await services.chain.sendRawTransaction(wire);
  } catch (err) {
    if (!(err instanceof ChainRejectedError)) throw err;
    // Landed already: the status look below records it.
    if (err.kind !== 'already_processed') {
      // Set up meanwhile by someone else (a payment's own create, another process): nothing left to do.
      if ((await services.chain.accountExists(owner)) && (await services.chain.tokenAccountExists(owner, mint))) return;
      services.log.warn('payee setup refused by the cluster', { owner, kind: err.kind, reason: err.reason, logs: err.logs });
      throw new AppError('SERVICE_UNAVAILABLE', `Solana refused the transaction that sets up ${owner}'s USDC account (${err.reason}); nothing was charged.`, {
        headers: { 'Retry-After': '10' },
        howToFix: "Retry in a few seconds. If it persists, the operator should check the fee payer's SOL (agent-wallet admin doctor) and the daemon log.",
        details: { owner },
      });
    }
  }
  let sentAt = Date.now();
  const deadline = sentAt + CONFIRM_TIMEOUT_MS;
  for (;;) {
    const [status] = await services.chain.getSignatureStatuses([signature]);
    // Processed is not enough: the account must exist in the view the next reads use.
    if (status && status.confirmationStatus !== 'processed') {
      if (status.err !== null) {
        throw new AppError('SERVICE_UNAVAILABLE', `The transaction that sets up ${owner}'s USDC account failed on chain; nothing was charged.`, {
          headers: { 'Retry-After': '30' },
          howToFix: 'Retry later. The operator should check the fee payer\'s SOL (agent-wallet admin doctor) and the daemon log for the error.',
          details: { signature, error: JSON.stringify(status.err) },
        });
      }
      services.log.info('payee prepared for Solana Pay', { owner, funded_account: !accountExists, created_token_account: !tokenAccountExists, signature });
      return;
    }
    if (Date.now() > deadline) {
      throw new AppError('SERVICE_UNAVAILABLE', `The transaction that sets up ${owner}'s USDC account did not land within ${CONFIRM_TIMEOUT_MS / 1000} s (the cluster may be congested); nothing was charged.`, {
        headers: { 'Retry-After': '10' },
        howToFix: 'Retry in a few seconds. If it persists, the operator should check the fee payer and solana.priority_fee_cap_micro_lamports against current fees.',
        details: { signature },
      });
    }
    // A congested leader may have dropped it: the same signed bytes again, as payments are re-sent.
    if (Date.now() - sentAt >= REBROADCAST_MS) {
      sentAt = Date.now();
      await services.chain.sendRawTransaction(wire).catch((err: unknown) => {
        if (!(err instanceof ChainRejectedError)) throw err;
        // Landed meanwhile, or expired: the next status read or the deadline says so. Any other
        // refusal (the fee payer briefly short of SOL) says nothing of the first send, which the
        // cluster accepted and may still land, as for a payment's re-send (settle.ts).
        if (err.kind !== 'already_processed' && err.kind !== 'blockhash_not_found') {
          services.log.warn('a re-send of the payee setup was refused; waiting for the first send until the deadline', { owner, signature, kind: err.kind, reason: err.reason });
        }
      });
    }
    await Bun.sleep(200);
  }
}
