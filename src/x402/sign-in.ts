/**
 * Signing in instead of paying again (x402 `sign-in-with-x`, CAIP-122 with `siws`): when a seller's
 * 402 offers a sign-in on our chain and this wallet has paid for that very URL before, the wallet
 * proves it with an Ed25519 signature of a SIWS text — FROST, agent and daemon, as for a transfer.
 *
 *   open      (from x402_prepare) the daemon builds the text from the seller's challenge and this
 *             wallet's address, and keeps it only if `siwsProblem` finds nothing: the host being
 *             fetched, this chain, a nonce, issued now, valid ≤ 10 minutes, and bytes that do not
 *             decode as a Solana transaction or message. Otherwise the purchase goes on as usual.
 *   round     (x402_sign_in) the server's nonces for the agent's commitments, on the worker pool.
 *   complete  (x402_sign_in_complete) the text checked again (and against its stored fields), the
 *             signature computed, the nonces consumed with it, then the request re-sent with
 *             `SIGN-IN-WITH-X`. No money moves; the sign-in goes to the events and the audit log.
 *
 * The owner switches it off with the `x402_sign_in_disabled` rail.
 */
import { getBase58Decoder, type Address } from '@solana/kit';
import { addressBytes } from '../solana/address-codec.ts';
import { AppError, invalid } from '../errors.ts';
import type { ActionContext } from '../action-context.ts';
import { newId } from '../contract/ids.ts';
import { appendAudit, appendEvent } from '../db/events.ts';
import { loadEffectiveRails } from '../db/guard-rails.ts';
import type { WalletRow } from '../db/wallets.ts';
import { consumeSignInNonces, finishSignIn, getSignIn, hasPaidFor, insertSignIn, setSignInRound, type SignInRow } from '../db/x402-sign-ins.ts';
import { MAX_SIGN_IN_LIFETIME_MS, siwsMessage, siwsProblem, type SiwsFields } from '../domain/siws.ts';
import { frostPool } from '../frost/pool.ts';
import { open, seal } from '../frost/seal.ts';
import { decodeSignatureShare } from '../frost/wire.ts';
import { AGENT_ID } from '../frost/ids.ts';
import { FrostWireError } from '../frost/errors.ts';
import type { Services } from '../services.ts';
import { outboundFailure, outboundFor, OutboundError, PAID_MAX_BYTES, sendUpstream, upstreamView, type UpstreamRequest } from './http.ts';
import type { PaymentRequired } from './wire.ts';
import { isObject } from '../domain/json.ts';

export const SIGN_IN_WITH_X = 'sign-in-with-x';
const requestAad = (id: string) => `x402-sign-in-request:${id}`;

const optionalString = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** The seller's challenge as sign-in fields for this wallet, when it offers one on `caip2` with Ed25519; else null. */
function offeredFields(required: PaymentRequired, caip2: string, address: string): SiwsFields | null {
  const ext = isObject(required.raw.extensions) ? required.raw.extensions[SIGN_IN_WITH_X] : undefined;
  if (!isObject(ext) || !isObject(ext.info) || !Array.isArray(ext.supportedChains)) return null;
  if (!ext.supportedChains.some((c) => isObject(c) && c.chainId === caip2 && c.type === 'ed25519')) return null;
  const i = ext.info;
  return {
    domain: String(i.domain ?? ''),
    address,
    ...(optionalString(i.statement) !== undefined ? { statement: optionalString(i.statement) } : {}),
    uri: String(i.uri ?? ''),
    version: String(i.version ?? ''),
    chainId: caip2,
    nonce: String(i.nonce ?? ''),
    issuedAt: String(i.issuedAt ?? ''),
    ...(optionalString(i.expirationTime) !== undefined ? { expirationTime: optionalString(i.expirationTime) } : {}),
    ...(optionalString(i.notBefore) !== undefined ? { notBefore: optionalString(i.notBefore) } : {}),
    ...(optionalString(i.requestId) !== undefined ? { requestId: optionalString(i.requestId) } : {}),
    ...(Array.isArray(i.resources) ? { resources: i.resources.map(String) } : {}),
  };
}

/** The sign-in as the agent sees it. */
export function signInView(row: SignInRow) {
  const stored = row.response ? (JSON.parse(row.response) as { status: number; headers: Record<string, string>; body_base64: string; truncated: boolean }) : null;
  return {
    sign_in_id: row.sign_in_id,
    status: row.status,
    url: row.url,
    host: row.host,
    message: row.message,
    expires_at: new Date(Number(row.expires_at)).toISOString(),
    signature: row.signature,
    error: row.error,
    response: stored ? upstreamView({ status: stored.status, headers: new Headers(stored.headers), body: new Uint8Array(Buffer.from(stored.body_base64, 'base64')), truncated: stored.truncated }) : null,
    next_step:
      row.status === 'open'
        ? 'check the message (your host, this wallet, ≤ 10 minutes), then x402_sign_in with your commitments and x402_sign_in_complete with your share; nothing is paid'
        : row.status === 'refused' || row.status === 'failed'
          ? `the seller did not take the sign-in: buy it with x402_prepare {url, sign_in: false}`
          : null,
  };
}

/**
 * From x402_prepare: opens a sign-in when the 402 offers one this wallet may sign — `declined`
 * says why not when it offered one we refuse (the purchase then goes on), null when there is
 * nothing to sign in for. Writes in the caller's transaction.
 */
export async function openSignIn(
  ctx: ActionContext,
  wallet: WalletRow,
  req: UpstreamRequest,
  host: string,
  required: PaymentRequired,
  caip2: string | null,
): Promise<{ row: SignInRow } | { declined: string } | null> {
  const { services } = ctx;
  if (caip2 === null || required.version !== 2) return null;
  const fields = offeredFields(required, caip2, wallet.address);
  if (!fields || !(await hasPaidFor(services.db, wallet.wallet_id, req.url))) return null;
  const now = services.now();
  if ((await loadEffectiveRails(services.db, wallet.wallet_id, now)).x402_sign_in_disabled) return { declined: 'the owner switched sign-in off (x402_sign_in_disabled)' };
  const problem = siwsProblem(fields, { url: req.url, address: wallet.address, chainId: caip2, now });
  if (problem) return { declined: problem };
  const id = newId('x402SignIn');
  await insertSignIn(services.db, {
    sign_in_id: id,
    wallet_id: wallet.wallet_id,
    url: req.url,
    host,
    method: req.method,
    request_sealed: seal(services.masterKey, new TextEncoder().encode(JSON.stringify(req)), requestAad(id)),
    fields: JSON.stringify(fields),
    message: siwsMessage(fields),
    expires_at: Math.min(Date.parse(fields.expirationTime!), now.getTime() + MAX_SIGN_IN_LIFETIME_MS),
    now: now.getTime(),
  });
  return { row: (await getSignIn(services.db, wallet.wallet_id, id))! };
}

/** The stored sign-in, checked again as it was when opened: still open, unexpired, the same text, still signable. */
function signable(services: Services, wallet: WalletRow, row: SignInRow, caip2: string): SiwsFields {
  if (row.status !== 'open') throw new AppError('INVALID_STATUS', `This sign-in is ${row.status}.`, { howToFix: 'Fetch the URL again with x402_prepare.' });
  const fields = JSON.parse(row.fields) as SiwsFields;
  const problem = siwsProblem(fields, { url: row.url, address: wallet.address, chainId: caip2, now: services.now() });
  if (problem || siwsMessage(fields) !== row.message) {
    throw new AppError('INVALID_STATUS', `This sign-in is not signed: ${problem ?? 'its text no longer matches its fields'}.`, { howToFix: 'Fetch the URL again with x402_prepare.' });
  }
  return fields;
}

async function ownSignIn(services: Services, wallet: WalletRow, id: string): Promise<SignInRow> {
  const row = await getSignIn(services.db, wallet.wallet_id, id);
  if (!row) throw new AppError('NOT_FOUND', 'Sign-in not found.', { howToFix: 'Use the sign_in_id x402_prepare returned.' });
  return row;
}

/** x402_sign_in: the server's round for the agent's commitments. */
export async function signInRound(services: Services, wallet: WalletRow, id: string, caip2: string, commitments: unknown) {
  signable(services, wallet, await ownSignIn(services, wallet, id), caip2);
  const round = await frostPool().run({ kind: 'round', masterKey: services.masterKey, walletId: wallet.wallet_id, serverKey: wallet.server_key, sessionId: id, agent: commitments }, wallet.wallet_id);
  if (!round.ok) throw invalid(round.field, round.message);
  const row = await services.db
    .transaction(async () => {
      const current = await ownSignIn(services, wallet, id);
      signable(services, wallet, current, caip2);
      await setSignInRound(services.db, id, { agent: JSON.stringify(round.agent), server: JSON.stringify(round.server), nonces: round.sealedNonces }, services.now().getTime());
      return await ownSignIn(services, wallet, id);
    });
  return { ...signInView(row), server_commitments: round.server };
}

/** x402_sign_in_complete: the signature, then the request re-sent signed in. */
export async function signInComplete(services: Services, wallet: WalletRow, id: string, caip2: string, shareJson: unknown) {
  let agentShare: Uint8Array;
  try {
    agentShare = decodeSignatureShare(shareJson, AGENT_ID, 'signature_share');
  } catch (err) {
    if (err instanceof FrostWireError) throw invalid(`/${err.field.replaceAll('.', '/')}`, err.message.slice(err.field.length + 2));
    throw err;
  }
  const before = await ownSignIn(services, wallet, id);
  const fields = signable(services, wallet, before, caip2);
  if (!before.nonces || !before.agent_commitments || !before.server_commitments) {
    throw new AppError('INVALID_STATUS', 'No signing round is open for this sign-in.', { howToFix: 'Call x402_sign_in with your commitments first.' });
  }
  const signed = await frostPool().run(
    {
      kind: 'sign',
      masterKey: services.masterKey,
      walletId: wallet.wallet_id,
      serverKey: wallet.server_key,
      sessionId: id,
      sealedNonces: before.nonces,
      agentCommitments: before.agent_commitments,
      serverCommitments: before.server_commitments,
      message: new TextEncoder().encode(before.message),
      agentShare,
      groupKey: addressBytes(wallet.address),
    },
    wallet.wallet_id,
  );
  const now = services.now().getTime();
  const signature = signed.ok ? getBase58Decoder().decode(signed.signature) : null;
  const taken = await services.db
    .transaction(async () => {
      const current = await ownSignIn(services, wallet, id);
      // The round computed on is the one still open: its nonces are consumed with what they made.
      if (current.status !== 'open' || !current.nonces || Buffer.compare(Buffer.from(current.nonces), Buffer.from(before.nonces!)) !== 0) return false;
      await consumeSignInNonces(services.db, id, signature, signature ? 'signing' : 'failed', now, signed.ok ? null : signed.reason === 'share' ? signed.message : 'the aggregated signature does not verify');
      return true;
    });
  if (!taken) throw new AppError('INVALID_STATUS', 'This sign-in was signed or replaced meanwhile.', { howToFix: 'Read it again, or fetch the URL again with x402_prepare.' });
  if (!signed.ok) {
    if (signed.reason === 'verify') throw new AppError('INTERNAL_ERROR', 'The aggregated signature does not verify.');
    throw invalid('/signature_share', signed.message, 'Sign exactly the message x402_sign_in returned with the nonces of its commitments; fetch the URL again for a new sign-in.');
  }
  const header = Buffer.from(JSON.stringify({ ...fields, type: 'ed25519', signatureScheme: 'siws', signature }), 'utf8').toString('base64');
  const request = JSON.parse(new TextDecoder().decode(open(services.masterKey, before.request_sealed, requestAad(id)))) as UpstreamRequest;
  let res;
  try {
    // The same rule as every effect: the signed sign-in leaves once its row is on the disk.
    await services.durable();
    res = await sendUpstream(outboundFor(services.config), request, PAID_MAX_BYTES, { 'SIGN-IN-WITH-X': header });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await services.db.transaction(async () => await finishSignIn(services.db, id, 'refused', JSON.stringify({ status: 0, headers: {}, body_base64: '', truncated: false, error: message }), services.now().getTime()));
    if (err instanceof OutboundError) throw outboundFailure(err, services.config, `sending the signed-in request to ${before.host} failed`);
    throw err;
  }
  const ok = res.status >= 200 && res.status < 400;
  const view = upstreamView(res);
  const stored = JSON.stringify({ status: res.status, headers: view.headers, body_base64: Buffer.from(res.body).toString('base64'), truncated: res.truncated });
  await services.db
    .transaction(async () => {
      const at = services.now().getTime();
      await finishSignIn(services.db, id, ok ? 'completed' : 'refused', stored, at);
      const data = { sign_in_id: id, url: before.url, host: before.host, http_status: res.status, signed_in: ok };
      await appendEvent(services.db, { walletId: wallet.wallet_id, type: 'x402.signed_in', data, now: at });
      await appendAudit(services.db, { walletId: wallet.wallet_id, actor: 'agent', kind: 'x402.sign_in', data: { ...data, domain: fields.domain, nonce: fields.nonce }, now: at });
    });
  return signInView(await ownSignIn(services, wallet, id));
}
