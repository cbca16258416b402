/**
 * The daemon as an x402 facilitator for its own merchants and wallets (DESIGN §8.1): `supported`, `verify` and
 * `settle` as the official middleware calls them (`HTTPFacilitatorClient` bodies
 * `{x402Version, paymentPayload, paymentRequirements}`), for Solana `exact` on this network and
 * USDC mint, v2 and v1.
 *
 * verify enforces every MUST of the exact SVM scheme, each refusal under the scheme's reason:
 * the x402 layout only (compute-unit limit, compute-unit price within the cap, one TransferChecked,
 * at most a memo), no address lookup tables, the exact amount of the mint to ATA(payTo) — an
 * account that must exist (a facilitator never creates it) —, our fee payer as fee payer and in no
 * instruction's accounts, the payer's own valid signature, and a balance that covers it. It serves
 * only the authenticated seller's own address — a merchant's payout address (merchant key) or a
 * wallet's own address (its bot key): no open relay for strangers' fees. The checks that need no chain
 * are src/x402/exact-transaction.ts, which the paywall runs too.
 *
 * What one settle may cost the fee payer is bounded: the compute-unit limit may ask no more than an
 * exact transfer needs (the reference client's 20,000 CU), at the scheme's price cap, so a settle
 * costs at most two signatures and 100,000 lamports of priority fee; and what a seller's sales cost
 * counts against that seller's daily allowance (src/earning/sale-fees.ts).
 *
 * verify asks the chain last, by a simulation (the official facilitator's check too): a payment
 * under a blockhash the chain does not know, or one it would refuse, is refused at verify. The
 * chain calls of verify and settle run in the background of the RPC budget: a stranger's payment
 * never waits in front of an agent's call.
 *
 * settle verifies again, co-signs as fee payer, records the sale (the message is unique: a
 * payload settles once), sends through the chain port and waits briefly for the one status poll
 * all waiting settles share; an outcome the chain has not shown yet is `settlement_pending`,
 * resolved later by the outcome job. A send the node answers "blockhash not found" was not sent:
 * the sale fails at once. A merchant's sale fee is owed once the sale completes. A settled sale is the
 * seller's `x402.sale` event: a merchant's also a Standard Webhooks message; a wallet's is in its
 * feed and decision log (the money itself reaches its ledger through the deposit watch).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { Lru } from '../domain/lru.ts';
import { getBase58Decoder, type Address } from '@solana/kit';
import { newId } from '../contract/ids.ts';
import { appendEvent } from '../db/events.ts';
import { getMerchant, type MerchantRow } from '../db/merchants.ts';
import { getWallet, type WalletRow } from '../db/wallets.ts';
import { saleClaims, signReceipt } from '../evidence/receipts.ts';
import { finishSale, getSale, insertSale, saleByMessageHash, settlingSales, type SaleRow } from '../db/x402-sales.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { ed25519Sign } from '../frost/native-ed25519.ts';
import type { Services } from '../services.ts';
import { ChainRejectedError, ChainUnavailableError } from '../solana/errors.ts';
import { inBackground } from '../solana/rpc-priority.ts';
import type { SignatureStatus } from '../solana/port.ts';
import { assembleSignedTransaction } from '../solana/transfer.ts';
import { recordMerchantEvent } from '../webhooks/outbox.ts';
import { checkTransaction } from './exact-transaction.ts';
import { payableTarget } from './purchase.ts';
import { PAYMENT_ID, PAYMENT_IDENTIFIER } from './wire.ts';
import { isObject } from '../domain/json.ts';
import { accrue, creditRefusal, networkRefusal, saleFee, type NetworkRefusal } from '../earning/sale-fees.ts';
import { recordNetworkCost, releaseNetworkCost } from '../db/sale-fees.ts';

/** The refusal of a sale whose merchant owes more sale fees than its credit allows (not one of the scheme's reasons: ours). */
export const FEE_CREDIT_EXHAUSTED = 'merchant_fee_credit_exhausted';
/** The refusal of a sale whose seller's sales cost the fee payer their daily allowance already (ours). */
export const NETWORK_ALLOWANCE_EXHAUSTED = 'seller_network_allowance_exhausted';
/** The refusal of a sale when all sellers' sales together cost the fee payer the operator's daily allowance (ours). */
export const TOTAL_NETWORK_ALLOWANCE_EXHAUSTED = 'network_allowance_exhausted';
const refusalReason = (r: NetworkRefusal) => (r.scope === 'seller' ? NETWORK_ALLOWANCE_EXHAUSTED : TOTAL_NETWORK_ALLOWANCE_EXHAUSTED);
/** The base fee of each signature, paid by the fee payer for both (its own and the buyer's). */
const LAMPORTS_PER_SIGNATURE = 5_000n;
/** The refusal of a payment whose blockhash the chain does not know (expired, or never one of its own). */
export const UNKNOWN_BLOCKHASH = 'invalid_exact_svm_payload_blockhash_not_found';
/** How long settle waits for the chain before answering settlement_pending. */
const SETTLE_WAIT_MS = 15_000;
/** How often the waiting settles' statuses are asked again, all in one call: about a slot. */
const STATUS_POLL_MS = 400;
/**
 * A settle just sent is asked about in the next round, at most this long after the one before:
 * simnet and a fast node show a transaction at once, and a settle waiting out a 400 ms round
 * answered in 440 ms against 44 ms (16 buyers settled 31/s against 200/s). Settles sent together
 * share the round, so calls stay at most one a round.
 */
const ROUND_GAP_MS = 10;
/** A sale the chain has not shown this long after it was sent can no longer land (its blockhash lives ~60–90 s). */
const SALE_EXPIRY_MS = 180_000;

/** GET /supported: the kinds the middleware builds requirements from (our fee payer in `extra`). */
export function supported(services: Services) {
  const { caip2, v1Network } = payableTarget(services.config);
  const feePayer = services.feePayer.address;
  const kinds = [
    ...(caip2 ? [{ x402Version: 2, scheme: 'exact', network: caip2, extra: { feePayer } }] : []),
    ...(v1Network ? [{ x402Version: 1, scheme: 'exact', network: v1Network, extra: { feePayer } }] : []),
  ];
  return { kinds, extensions: [PAYMENT_IDENTIFIER], signers: Object.fromEntries(kinds.map((k) => [k.network, [feePayer]])) };
}

/** Who sells: a merchant (its payout address) or one of our wallets (its own address). */
export type Seller = { kind: 'merchant'; merchant: MerchantRow; payTo: string } | { kind: 'wallet'; wallet: WalletRow; payTo: string };

export const merchantSeller = (merchant: MerchantRow): Seller => ({ kind: 'merchant', merchant, payTo: merchant.payout_address });
export const walletSeller = (wallet: WalletRow): Seller => ({ kind: 'wallet', wallet, payTo: wallet.address });
const sellerId = (seller: Seller): string => (seller.kind === 'merchant' ? seller.merchant.merchant_id : seller.wallet.wallet_id);

type Checked =
  | { ok: true; payer: Address; amount: bigint; fee: bigint; networkCost: bigint; payTo: string; network: string; messageBytes: Uint8Array; signatures: Record<string, Uint8Array>; resource: string | null; paymentId: string | null }
  | { ok: false; reason: string; message: string; payer?: string };

const no = (reason: string, message: string, payer?: string): Checked => ({ ok: false, reason, message, ...(payer ? { payer } : {}) });

/**
 * Payloads whose simulation passed at /verify lately, by message hash: the middleware's /settle of
 * the same payload follows within a second or two and is not simulated again (its send is, by the
 * node's preflight, which refuses an unknown blockhash as "not sent"). Two simulations a sale took
 * a third of the chain process's CPU under 16 buyers.
 */
const simulatedOk = new WeakMap<Services, Lru<string, number>>();
const SIMULATED_FOR_MS = 30_000;

function simulatedLately(services: Services, messageBytes: Uint8Array): boolean {
  const at = simulatedOk.get(services)?.get(bytesToHex(sha256(messageBytes)));
  return at !== undefined && performance.now() - at < SIMULATED_FOR_MS;
}

function rememberSimulated(services: Services, messageBytes: Uint8Array): void {
  let seen = simulatedOk.get(services);
  if (!seen) simulatedOk.set(services, (seen = new Lru(10_000)));
  seen.set(bytesToHex(sha256(messageBytes)), performance.now());
}

/** Every MUST of the exact SVM scheme for `seller` (see the module comment); `settling`: a payload verified lately is not simulated again. */
export async function checkPayment(services: Services, seller: Seller, body: unknown, settling = false): Promise<Checked> {
  if (!isObject(body) || !isObject(body.paymentPayload) || !isObject(body.paymentRequirements)) return no('invalid_payload', 'the body must be {x402Version, paymentPayload, paymentRequirements}');
  const version = body.paymentPayload.x402Version ?? body.x402Version;
  if (version !== 1 && version !== 2) return no('invalid_x402_version', `x402Version ${String(version)} is not 1 or 2`);
  const req = body.paymentRequirements;
  const { caip2, v1Network, mint } = payableTarget(services.config);
  const network = version === 2 ? caip2 : v1Network;
  if (req.scheme !== 'exact') return no('unsupported_scheme', `scheme ${String(req.scheme)} is not exact`);
  if (network === null || req.network !== network) return no('invalid_network', `network ${String(req.network)} is not ${network ?? 'served here'}`);
  if (req.asset !== mint) return no('invalid_exact_svm_payload_mint_mismatch', `asset ${String(req.asset)} is not this network's USDC (${mint})`);
  const amountText = version === 2 ? req.amount : req.maxAmountRequired;
  if (typeof amountText !== 'string' || !/^[1-9][0-9]{0,19}$/.test(amountText) || BigInt(amountText) >= 1n << 64n) return no('invalid_payment_requirements', 'the amount is not a positive atomic integer');
  const amount = BigInt(amountText);
  // The operator's fee on a merchant's sale is owed by the merchant (src/earning/sale-fees.ts), within its credit.
  const fee = seller.kind === 'merchant' ? saleFee(services, amount) : 0n;
  const overCredit = seller.kind === 'merchant' ? await creditRefusal(services, seller.merchant.merchant_id, fee) : null;
  if (overCredit) return no(FEE_CREDIT_EXHAUSTED, overCredit);
  // No open relay: only the authenticated seller's own address is settled here.
  if (req.payTo !== seller.payTo) return no('invalid_payment_requirements', `payTo ${String(req.payTo)} is not this ${seller.kind === 'merchant' ? "merchant's payout address" : "wallet's address"} registered here`);
  const feePayer = services.feePayer.address;
  if (!isObject(req.extra) || req.extra.feePayer !== feePayer) return no('invalid_exact_svm_payload_transaction_fee_payer_mismatch', `extra.feePayer must be this facilitator's fee payer ${feePayer}`);
  const transaction = isObject(body.paymentPayload.payload) ? body.paymentPayload.payload.transaction : undefined;
  const t = await checkTransaction(transaction, { mint, payTo: seller.payTo, amount, feePayer });
  if (!t.ok) return t;
  const { payer } = t;
  // What the fee payer pays when it lands: both signatures and the priority fee (price × limit, rounded up).
  const networkCost = 2n * LAMPORTS_PER_SIGNATURE + (BigInt(t.units) * t.microLamports + 999_999n) / 1_000_000n;
  const overAllowance = await networkRefusal(services, sellerId(seller), networkCost);
  if (overAllowance) return no(refusalReason(overAllowance), overAllowance.message, payer);
  // The chain runs it as it would (its blockhash, the payer's balance, payTo's account) without our signature.
  const simulated = settling && simulatedLately(services, t.messageBytes) ? { err: null } : await inBackground(() => services.chain.simulate(t.wire));
  if (simulated.err === 'BlockhashNotFound') return no(UNKNOWN_BLOCKHASH, "the chain does not know the transaction's blockhash (expired, or not one of this network's); sign the payment again with a recent blockhash", payer);
  if (simulated.err === 'AlreadyProcessed') return no('duplicate_settlement', 'the chain processed this transaction already', payer);
  if (simulated.err !== null) {
    // Said precisely where it can be: the two refusals a buyer can fix.
    const [payToReady, balance] = await inBackground(() =>
      Promise.all([services.chain.tokenAccountExists(seller.payTo as Address, mint as Address), services.chain.getTokenBalance(payer, mint as Address)]),
    );
    if (!payToReady) return no('invalid_exact_svm_payload_recipient_token_account_missing', 'payTo has no USDC token account; a facilitator never creates it', payer);
    if (balance < amount) return no('insufficient_funds', `the payer holds ${balance}, less than ${amount}`, payer);
    return no('transaction_simulation_failed', `the chain would refuse the transaction: ${JSON.stringify(simulated.err, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`, payer);
  }
  const extension = isObject(body.paymentPayload.extensions) ? body.paymentPayload.extensions[PAYMENT_IDENTIFIER] : undefined;
  // Kept only when it is a payment identifier (the extension's pattern); the books prefix it (src/db/merchants.ts).
  const paymentId = isObject(extension) && isObject(extension.info) && typeof extension.info.id === 'string' && PAYMENT_ID.test(extension.info.id) ? extension.info.id : null;
  const resource = isObject(body.paymentPayload.resource) && typeof body.paymentPayload.resource.url === 'string' ? body.paymentPayload.resource.url.slice(0, 2048) : typeof req.resource === 'string' ? req.resource.slice(0, 2048) : null;
  return { ok: true, payer, amount, fee, networkCost, payTo: seller.payTo, network, messageBytes: t.messageBytes, signatures: t.signatures, resource, paymentId };
}

/** POST /verify. */
export async function verify(services: Services, seller: Seller, body: unknown) {
  const c = await checkPayment(services, seller, body);
  if (c.ok) rememberSimulated(services, c.messageBytes);
  return c.ok ? { isValid: true, payer: c.payer } : { isValid: false, invalidReason: c.reason, invalidMessage: c.message, ...(c.payer ? { payer: c.payer } : {}) };
}

/** POST /settle. */
export async function settle(services: Services, seller: Seller, body: unknown) {
  const c = await checkPayment(services, seller, body, true);
  const network = isObject(body) && isObject(body.paymentRequirements) ? String(body.paymentRequirements.network ?? '') : '';
  if (!c.ok) return { success: false, errorReason: c.reason, errorMessage: c.message, transaction: '', network, ...(c.payer ? { payer: c.payer } : {}) };
  const hash = sha256(c.messageBytes);
  const known = await saleByMessageHash(services.db, hash);
  if (known) return { success: false, errorReason: 'duplicate_settlement', errorMessage: `this payment was settled already (sale ${known.sale_id})`, transaction: known.signature, network, payer: c.payer };
  const feeSignature = ed25519Sign(c.messageBytes, services.feePayer.keypairBytes);
  const wire = assembleSignedTransaction(c.messageBytes, { [services.feePayer.address]: feeSignature, ...c.signatures });
  const signature = getBase58Decoder().decode(feeSignature);
  const saleId = newId('x402Sale');
  const merchantId = seller.kind === 'merchant' ? seller.merchant.merchant_id : null;
  let overCredit: string | null = null;
  let overAllowance: NetworkRefusal | null = null;
  try {
    await services.db
      .transaction(async () => {
        // Checked again where the fee is recorded: concurrent settles cannot together pass the credit.
        overCredit = merchantId === null ? null : await creditRefusal(services, merchantId, c.fee);
        if (overCredit !== null) return;
        // …nor the seller's SOL allowance, which is counted here, before the fee payer signs anything out.
        overAllowance = await networkRefusal(services, sellerId(seller), c.networkCost);
        if (overAllowance !== null) return;
        const now = services.now().getTime();
        await insertSale(services.db, { sale_id: saleId, merchant_id: merchantId, wallet_id: seller.kind === 'wallet' ? seller.wallet.wallet_id : null, pay_to: c.payTo, payer: c.payer, amount: c.amount, fee: c.fee, network: c.network, resource: c.resource, payment_id: c.paymentId, message_hash: hash, signature, signed_tx: wire, last_valid_block_height: null, now });
        await recordNetworkCost(services.db, { sale_id: saleId, seller_id: sellerId(seller), lamports: c.networkCost, now });
      });
  } catch (err) {
    // A concurrent settle of the same payload took it first (the message hash is unique).
    if (await saleByMessageHash(services.db, hash)) return { success: false, errorReason: 'duplicate_settlement', errorMessage: 'this payment is being settled already', transaction: signature, network, payer: c.payer };
    throw err;
  }
  if (overCredit !== null) return { success: false, errorReason: FEE_CREDIT_EXHAUSTED, errorMessage: overCredit, transaction: '', network, payer: c.payer };
  // Set inside the transaction's callback, which the compiler does not follow.
  const refused = overAllowance as NetworkRefusal | null;
  if (refused !== null) return { success: false, errorReason: refusalReason(refused), errorMessage: refused.message, transaction: '', network, payer: c.payer };
  try {
    await services.chain.sendRawTransaction(wire);
  } catch (err) {
    if (err instanceof ChainRejectedError && err.kind === 'blockhash_not_found') {
      // The node refused it before it went anywhere: it can never land.
      await finishSaleAs(services, saleId, 'failed', 'not sent: the node does not know its blockhash', false);
      const errorMessage = "not sent: the chain's node does not know the transaction's blockhash (expired, or newer than the node); nothing moved, sign the payment again with a recent blockhash";
      return { success: false, errorReason: UNKNOWN_BLOCKHASH, errorMessage, transaction: signature, network, payer: c.payer };
    }
    if (err instanceof ChainRejectedError && err.kind !== 'already_processed') {
      await finishSaleAs(services, saleId, 'failed', `Solana refused the transaction: ${err.reason}`, false);
      return { success: false, errorReason: 'transaction_failed', errorMessage: err.reason, transaction: signature, network, payer: c.payer };
    }
    if (!(err instanceof ChainUnavailableError) && !(err instanceof ChainRejectedError)) throw err;
  }
  const outcome = await outcomeOf(services, signature, SETTLE_WAIT_MS);
  if (outcome === 'completed') {
    await finishSaleAs(services, saleId, 'completed');
    return { success: true, transaction: signature, network, payer: c.payer, amount: c.amount.toString() };
  }
  if (outcome === 'failed') {
    await finishSaleAs(services, saleId, 'failed', 'the transaction failed on chain');
    return { success: false, errorReason: 'transaction_failed', errorMessage: 'the transaction failed on chain', transaction: signature, network, payer: c.payer };
  }
  return { success: false, errorReason: 'settlement_pending', errorMessage: 'sent; the chain has not confirmed it yet', transaction: signature, network, payer: c.payer };
}

type Outcome = 'completed' | 'failed' | 'pending';

const landed = (status: SignatureStatus | null | undefined): status is SignatureStatus =>
  !!status && (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized' || status.confirmationStatus === null);

/** The settles waiting for their transaction, per daemon, and whether the poll runs. */
interface Waiting {
  waiters: Map<string, (o: Outcome) => void>;
  /** Settles sent since the last round began: the next one comes without waiting out STATUS_POLL_MS. */
  unasked: number;
  /** Ends the poll's wait for the next round early. */
  wake: (() => void) | null;
  polling: boolean;
}
const waiting = new WeakMap<Services, Waiting>();

/**
 * The outcome of a sent sale within `ms`, else 'pending'. Every waiting settle shares one
 * getSignatureStatuses call a round, in the background of the RPC budget: a new settle is asked
 * about in the next round (ROUND_GAP_MS after the last), the ones still waiting every
 * STATUS_POLL_MS — twenty pending settles cost one call a round behind any agent's call, not twenty
 * calls every 100 ms ahead of it.
 */
function outcomeOf(services: Services, signature: string, ms: number): Promise<Outcome> {
  let state = waiting.get(services);
  if (!state) waiting.set(services, (state = { waiters: new Map(), unasked: 0, wake: null, polling: false }));
  const s = state;
  return new Promise((resolve) => {
    const done = (o: Outcome) => {
      clearTimeout(timer);
      if (s.waiters.get(signature) === done) s.waiters.delete(signature);
      resolve(o);
    };
    const timer = setTimeout(() => done('pending'), ms);
    s.waiters.set(signature, done);
    s.unasked++;
    s.wake?.();
    if (!s.polling) void poll(services, s);
  });
}

async function poll(services: Services, state: Waiting): Promise<void> {
  state.polling = true;
  try {
    while (state.waiters.size > 0) {
      if (state.unasked === 0) {
        await new Promise<void>((wake) => {
          const timer = setTimeout(wake, STATUS_POLL_MS);
          state.wake = () => {
            clearTimeout(timer);
            wake();
          };
        });
        state.wake = null;
      }
      await Bun.sleep(ROUND_GAP_MS);
      state.unasked = 0;
      const signatures = [...state.waiters.keys()];
      if (signatures.length === 0) break;
      try {
        const statuses = await inBackground(() => services.chain.getSignatureStatuses(signatures));
        for (const [i, signature] of signatures.entries()) {
          const status = statuses[i];
          if (landed(status)) state.waiters.get(signature)?.(status.err === null ? 'completed' : 'failed');
        }
      } catch (err) {
        // The next round asks again; a settle not answered in time is settlement_pending.
        services.log.debug('x402 settle status poll failed', { error: err instanceof Error ? err.message : String(err) });
      }
    }
  } finally {
    state.polling = false;
  }
}

/**
 * Records a sale's outcome; a completed one is the seller's x402.sale event (a merchant's also its
 * webhook) and owes its fee, in the same transaction. A failed one owes nothing; one whose
 * transaction never landed was not `charged` to the fee payer either.
 */
async function finishSaleAs(services: Services, saleId: string, status: 'completed' | 'failed', error: string | null = null, charged = true): Promise<void> {
  const now = services.now().getTime();
  await services.db
    .transaction(async () => {
      if (!(await finishSale(services.db, saleId, status, now, error))) return;
      const sale = (await getSale(services.db, saleId))!;
      if (!charged) await releaseNetworkCost(services.db, saleId);
      if (status === 'failed') return;
      if (sale.merchant_id) await accrue(services, sale.merchant_id, sale.fee, now);
      if (sale.merchant_id) await recordMerchantEvent(services.db, sale.merchant_id, 'x402.sale', await saleEvent(services, sale, now), now);
      else await appendEvent(services.db, { walletId: sale.wallet_id!, type: 'x402.sale', data: await saleEvent(services, sale, now), now });
    });
}

async function saleEvent(services: Services, s: SaleRow, now: number) {
  const merchant = s.merchant_id ? await getMerchant(services.db, s.merchant_id) : null;
  const wallet = s.wallet_id ? await getWallet(services.db, s.wallet_id) : null;
  const to = merchant ? { merchant_id: merchant.merchant_id, username: merchant.username, address: s.pay_to } : { wallet_id: wallet?.wallet_id ?? null, username: wallet?.username ?? null, address: s.pay_to };
  return {
    sale_id: s.sale_id,
    amount: toUsdcNumber(s.amount),
    currency: 'USDC',
    payer_address: s.payer,
    pay_to: s.pay_to,
    resource: s.resource,
    payment_id: s.payment_id,
    signature: s.signature,
    paid_at: new Date(now).toISOString(),
    network: services.config.solana.network,
    // The sale's signed receipt (src/evidence/receipts.ts); its slot is asked of the chain by get_receipt.
    receipt: signReceipt(services, saleClaims(services, s, to, null)),
  };
}

/** The outcome job's pass over sales still settling: the chain decides; past their lifetime, failed. */
export async function resolveSales(services: Services): Promise<number> {
  const sales = await settlingSales(services.db, 256);
  if (sales.length === 0) return 0;
  const statuses = await services.chain.getSignatureStatuses(sales.map((s) => s.signature));
  let resolved = 0;
  for (const [i, s] of sales.entries()) {
    const status = statuses[i];
    if (landed(status)) {
      await finishSaleAs(services, s.sale_id, status.err === null ? 'completed' : 'failed', status.err === null ? null : 'the transaction failed on chain');
      resolved++;
    } else if (!status && services.now().getTime() - Number(s.created_at) > SALE_EXPIRY_MS) {
      await finishSaleAs(services, s.sale_id, 'failed', 'never landed; its blockhash has expired', false);
      resolved++;
    }
  }
  return resolved;
}
