/**
 * The x402 facilitator over HTTP (src/x402/facilitator.ts), where the official middleware's
 * `HTTPFacilitatorClient` calls it: `GET /x402/facilitator/supported`, `POST …/verify`,
 * `POST …/settle`, each with the seller's API key: a merchant's (`Authorization: Bearer
 * wallet_merchant_…`, payTo its payout address) or a claimed wallet's bot key (payTo its own address).
 * The answers are the facilitator's own JSON (not our envelope), which is what the clients parse;
 * authentication and malformed bodies answer our error envelope with its status.
 */
import { Elysia } from 'elysia';
import { getMerchant } from '../db/merchants.ts';
import { getWallet } from '../db/wallets.ts';
import { KEY_PREFIXES } from '../domain/api-keys.ts';
import { AppError } from '../errors.ts';
import { merchantSeller, settle, supported, verify, walletSeller, type Seller } from '../x402/facilitator.ts';
import { authenticate, credentialOf } from './auth.ts';
import { rateLimit, type DispatchDeps } from './dispatch.ts';
import { bodyWithin } from './body.ts';
import { facilitatorBucket, rateHeaders, rateLimited } from './rate-limit.ts';
import { errorResponse, jsonResponse } from './respond.ts';

/** A facilitator body holds one payment: a few KiB. */
const BODY_LIMIT = 32 * 1024;

type Limits = Pick<DispatchDeps, 'services' | 'limiter'>;

/**
 * The seller the key belongs to: a merchant key's merchant, else a bot key's wallet. The call
 * counts against the key's facilitator budget, of its own: buyers' payments, junk included, reach
 * here through the seller's paywall, and must not use up the seller's other API calls. Its
 * RateLimit headers go into `headers`.
 */
async function sellerOf(deps: Limits, request: Request, ip: string, headers: Record<string, string>): Promise<Seller> {
  const { services } = deps;
  const credential = credentialOf(request.headers);
  if (credential) {
    const decision = await deps.limiter.hit(facilitatorBucket(credential.hash), services.config.rate_limits.per_key_per_minute);
    if (!decision.allowed) throw rateLimited(decision, "API key's facilitator calls (the key's /v1 calls have a budget of their own)");
    rateHeaders(decision, headers);
  } else await rateLimit(deps, { ip: () => ip }, credential, headers);
  if (credential?.token.startsWith(KEY_PREFIXES.merchant)) {
    const principal = await authenticate(services.db, credential, 'merchant');
    const merchant = principal.kind === 'merchant' ? await getMerchant(services.db, principal.merchantId) : null;
    if (merchant) return merchantSeller(merchant);
  } else {
    const principal = await authenticate(services.db, credential, 'bot');
    const wallet = principal.kind === 'bot' ? await getWallet(services.db, principal.walletId) : null;
    // A wallet nobody has claimed is anyone's to make: it sells nothing on the operator's fee payer.
    if (wallet?.status === 'unclaimed') {
      throw new AppError('WALLET_NOT_CLAIMED', 'The wallet is not claimed yet, so it cannot sell through the facilitator.', {
        howToFix: 'Have the owner claim the wallet at its claim URL with the claim code (agent-wallet info shows both); its sales settle from then on.',
      });
    }
    if (wallet) return walletSeller(wallet);
  }
  throw new AppError('UNAUTHORIZED', 'Invalid API key.', { howToFix: "Send a merchant's key (Authorization: Bearer wallet_merchant_…) or a wallet's bot key; the facilitator settles payments to that seller only." });
}

async function jsonBody(request: Request): Promise<unknown> {
  const bytes = await bodyWithin(request, BODY_LIMIT);
  if (bytes === null) {
    throw new AppError('VALIDATION_ERROR', `(body): larger than ${BODY_LIMIT / 1024} KiB`, {
      status: 413,
      howToFix: `A facilitator request holds one payment: at most ${BODY_LIMIT} bytes.`,
      headers: { Connection: 'close' },
    });
  }
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The body is not JSON.', { howToFix: 'Send {x402Version, paymentPayload, paymentRequirements} as JSON.' });
  }
}

export function facilitatorRoutes(deps: Limits, ipOf: (request: Request) => string) {
  const { services } = deps;
  /** A route for the key's seller: every answer carries the RateLimit headers, as the /v1 ones do. */
  const forSeller =
    (run: (seller: Seller, request: Request) => unknown) =>
    async ({ request }: { request: Request }): Promise<Response> => {
      const headers: Record<string, string> = {};
      try {
        return jsonResponse(200, await run(await sellerOf(deps, request, ipOf(request), headers), request), headers);
      } catch (err) {
        if (err instanceof AppError) return errorResponse(err, headers);
        throw err;
      }
    };
  return new Elysia({ prefix: '/x402/facilitator' })
    .get('/supported', forSeller(() => supported(services)))
    .post('/verify', forSeller(async (seller, request) => verify(services, seller, await jsonBody(request))), { parse: 'none' })
    .post('/settle', forSeller(async (seller, request) => settle(services, seller, await jsonBody(request))), { parse: 'none' });
}
