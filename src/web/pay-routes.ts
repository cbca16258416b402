/**
 * Pages of earning and funding (DESIGN §8), mounted by createApp with `.use(payRoutes(services))`:
 * the paylink checkout `/pay/<short_code>`, the fund page `/fund/<id>` and, on simnet, the fund
 * page's faucet button. Public (the short code and the fund request id are unguessable), a thin
 * layer over the functions the API actions use.
 */
import { Elysia } from 'elysia';
import type { Address } from '@solana/kit';
import { paylinkByShortCode } from '../actions/earning.ts';
import { fundSolanaPayUrl, fundTarget } from '../earning/funding.ts';
import { publicPaylinkView } from '../earning/paylinks.ts';
import { nudgeScan } from '../earning/scan.ts';
import { getPaylink } from '../db/paylinks.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { usdcAta } from '../solana/ata.ts';
import type { Services } from '../services.ts';
import { PAGE_HEADERS, pageResponse, problemPage, redirect } from './html.ts';
import { page } from './page-handler.ts';
import { checkoutPage, fundPage, qrSvg } from './pay-views.ts';
import { anonymousCsrf, readForm, validAnonymousCsrf } from './session.ts';

/** The checkout page runs one inline script (by nonce) that polls pay_status on this origin. */
function checkoutCsp(nonce: string): Record<string, string> {
  return {
    'Content-Security-Policy': `${PAGE_HEADERS['Content-Security-Policy']}; script-src 'nonce-${nonce}'; connect-src 'self'`,
    'X-Robots-Tag': 'noindex',
  };
}


const notFound = (what: string, hint: string) => problemPage(404, `${what} not found`, `No ${what.toLowerCase()} has this link.`, hint, {}, { 'X-Robots-Tag': 'noindex' });

const NOTICES: Record<string, string> = {
  faucet: 'Test USDC sent from the simnet faucet. The request is marked fulfilled as soon as the deposit is seen (a few seconds); refresh to see it.',
};

/** Asks the embedded simnet's faucet (JSON-RPC `simnet_faucet`, loopback only) for `micro` USDC to `owner`. */
async function simnetFaucet(rpcUrl: string, owner: Address, micro: bigint): Promise<string> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'simnet_faucet', params: [owner, micro.toString()] }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { result?: string; error?: { message?: string } };
  if (body.error || typeof body.result !== 'string') throw new Error(`simnet faucet refused: ${body.error?.message ?? res.status}`);
  return body.result;
}

/** The pages as an Elysia plugin. */
export function payRoutes(services: Services) {
  const faucetOn = () => services.config.solana.network === 'simnet' && Boolean(services.simnetRpcUrl);
  return new Elysia({ name: 'pay-pages' })
    .get(
      '/pay/:short_code',
      page(services, async ({ params }) => {
        const found = await paylinkByShortCode(services, params.short_code!);
        if (!found) return notFound('Payment request', 'Check the link you were given: it ends in a 10-character code.');
        // A page view is a good moment to look at the chain (throttled), so a returning payer sees the truth.
        await nudgeScan(services, found);
        const row = (await getPaylink(services.db, found.request_id)) ?? found;
        const view = await publicPaylinkView(services, row);
        const qr = view.solana_pay_url ? await qrSvg(view.solana_pay_url, `QR code: pay ${view.payee.name} with a Solana wallet`) : null;
        const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64');
        const body = checkoutPage({ ...view, signature: row.signature }, qr, nonce, services.now().getTime());
        const title = view.status === 'paid' ? `Paid · ${view.payee.name}` : view.status === 'open' ? `Pay ${view.payee.name}` : `${view.payee.name} · ${view.status}`;
        return pageResponse(200, title, body, {}, checkoutCsp(nonce));
      }),
    )
    .get(
      '/fund/:id',
      page(services, async ({ request, params }) => {
        const target = /^fr_[0-9a-hjkmnp-tv-z]{26}$/.test(params.id!) ? await fundTarget(services, params.id!) : null;
        if (!target) return notFound('Fund request', 'Open the link from the e-mail again; it ends in the fund request id (fr_…).');
        const { row, wallet, address } = target;
        const url = fundSolanaPayUrl(services, row, wallet);
        const csrf = anonymousCsrf(services, request);
        const notice = NOTICES[new URL(request.url).searchParams.get('done') ?? ''] ?? null;
        const body = fundPage(
          {
            fund_request_id: row.fund_request_id,
            wallet_name: wallet.name,
            wallet_username: wallet.username,
            amount: toUsdcNumber(row.amount),
            reason: row.reason,
            status: row.status,
            address,
            token_account: await usdcAta(address, services.config.usdcMint as Address),
            usdc_mint: services.config.usdcMint,
            network: services.config.solana.network,
            solana_pay_url: url,
            created_at: new Date(Number(row.created_at)).toISOString(),
            faucet: faucetOn(),
          },
          await qrSvg(url, `QR code: deposit to ${wallet.name} with a Solana wallet`),
          csrf.token,
          notice,
        );
        const res = pageResponse(200, `Fund ${wallet.name}`, body, {}, { 'X-Robots-Tag': 'noindex' });
        if (csrf.setCookie) res.headers.append('Set-Cookie', csrf.setCookie);
        return res;
      }),
    )
    .post(
      '/fund/:id/faucet',
      page(services, async ({ request, params }) => {
        const target = /^fr_[0-9a-hjkmnp-tv-z]{26}$/.test(params.id!) ? await fundTarget(services, params.id!) : null;
        if (!target) return notFound('Fund request', 'Open the link from the e-mail again.');
        if (!faucetOn()) return problemPage(404, 'No faucet here', 'The faucet exists only on simnet, the local test chain.', 'Deposit real USDC to the address on the fund page.');
        const form = await readForm(request);
        if (!validAnonymousCsrf(request, form.get('csrf'))) {
          return problemPage(403, 'Form expired', 'This form was refused because its security token is missing or does not match (CSRF protection).', 'Go back, reload the page and submit the form again.');
        }
        if (target.row.status !== 'open') return redirect(`/fund/${target.row.fund_request_id}`);
        try {
          const signature = await simnetFaucet(services.simnetRpcUrl!, target.address, target.row.amount);
          services.log.info('simnet faucet for a fund request', { fund_request_id: target.row.fund_request_id, signature });
        } catch (err) {
          services.log.warn('simnet faucet failed', { fund_request_id: target.row.fund_request_id, error: (err as Error).message });
          return problemPage(503, 'Faucet unavailable', 'The simnet faucet did not answer.', 'Try again in a moment.');
        }
        return redirect(`/fund/${target.row.fund_request_id}?done=faucet`);
      }),
      { parse: 'none' },
    );
}
