/**
 * Pages of earning and funding (DESIGN §8), mounted by createApp with `.use(payRoutes(services))`:
 * the paylink checkout `/pay/<short_code>`, its payer's receipt `/pay/<short_code>/receipt` (and
 * the signed form `…/receipt.jws`), the fund page `/fund/<id>` and, on simnet only, the fund
 * page's faucet button and the checkout's test payer (a throwaway key the faucet funds, which pays
 * the paylink as a Solana Pay wallet does). Public (the short code and the fund request id are
 * unguessable), a thin layer over the functions the API actions use.
 */
import { Elysia } from 'elysia';
import type { Address } from '@solana/kit';
import { ed25519 } from '@noble/curves/ed25519.js';
import { paylinkByShortCode } from '../actions/earning.ts';
import { fundSolanaPayUrl, fundTarget } from '../earning/funding.ts';
import { publicPaylinkView } from '../earning/paylinks.ts';
import { nudgeScan, scanPaylink } from '../earning/scan.ts';
import { getPaylink, type PaylinkRow } from '../db/paylinks.ts';
import { parseUsdc, toUsdcNumber } from '../domain/money.ts';
import { usdcAta } from '../solana/ata.ts';
import { simnetFaucet } from '../simnet/faucet-client.ts';
import { addressOf } from '../solana/address-codec.ts';
import { createAtaIdempotentInstruction, transferCheckedInstruction } from '../solana/instructions.ts';
import { USDC_DECIMALS } from '../solana/networks.ts';
import { assembleSignedTransaction, compileMessage } from '../solana/transfer.ts';
import type { Services } from '../services.ts';
import { PAGE_HEADERS, pageResponse, problemPage, redirect } from './html.ts';
import { page } from './page-handler.ts';
import { checkoutPage, fundPage, qrSvg } from './pay-views.ts';
import { payerReceipt, receiptPage } from './receipt-views.ts';
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

const CHECKOUT_NOTICES: Record<string, string> = {
  simnet: 'Paid from a simnet test wallet the faucet funded, the way a Solana Pay wallet pays: the same transfer to the same account, with this request\'s reference.',
};

/** SOL the simnet test payer gets for its fee and the payee's token account (created idempotently): 0.01 SOL. */
const TEST_PAYER_LAMPORTS = 10_000_000n;

/**
 * Pays `row` on simnet as a human's Solana Pay wallet would: a throwaway key the faucet funds with
 * `micro` USDC and some SOL signs one transaction (the payee's token account created idempotently,
 * then transferChecked to it with the paylink's reference key appended read-only) and sends it.
 * Returns the signature. The paylink is marked paid by the same judgement as any payer's
 * transaction (scan.ts), never by this code.
 */
async function payAsSimnetTestWallet(services: Services, row: PaylinkRow, payTo: Address, micro: bigint): Promise<string> {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const payer = addressOf(ed25519.getPublicKey(seed));
  await simnetFaucet(services.simnetRpcUrl!, payer, micro, TEST_PAYER_LAMPORTS);
  const mint = services.config.usdcMint as Address;
  const [source, destination] = await Promise.all([usdcAta(payer, mint), usdcAta(payTo, mint)]);
  const message = compileMessage(payer, await services.chain.getLatestBlockhash(), [
    createAtaIdempotentInstruction({ payer, ata: destination, owner: payTo, mint }),
    transferCheckedInstruction({ source, mint, destination, authority: payer, amount: micro, decimals: USDC_DECIMALS, extraAccounts: [row.reference_key as Address] }),
  ]);
  const wire = assembleSignedTransaction(message, { [payer]: ed25519.sign(message, seed) });
  return await services.chain.sendRawTransaction(wire);
}

/** The pages as an Elysia plugin. */
export function payRoutes(services: Services) {
  const faucetOn = () => services.config.solana.network === 'simnet' && Boolean(services.simnetRpcUrl);
  return new Elysia({ name: 'pay-pages' })
    .get(
      '/pay/:short_code',
      page(services, async ({ request, params }) => {
        const found = await paylinkByShortCode(services, params.short_code!);
        if (!found) return notFound('Payment request', 'Check the link you were given: it ends in a 10-character code.');
        // A page view is a good moment to look at the chain (throttled), so a returning payer sees the truth.
        await nudgeScan(services, found);
        const row = (await getPaylink(services.db, found.request_id)) ?? found;
        const view = await publicPaylinkView(services, row);
        const qr = view.solana_pay_url ? await qrSvg(view.solana_pay_url, `QR code: pay ${view.payee.name} with a Solana wallet`) : null;
        const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64');
        const csrf = view.status === 'open' && faucetOn() ? anonymousCsrf(services, request) : null;
        const notice = CHECKOUT_NOTICES[new URL(request.url).searchParams.get('done') ?? ''] ?? null;
        const body = checkoutPage({ ...view, signature: row.signature }, qr, nonce, services.now().getTime(), { simnetPayCsrf: csrf?.token ?? null, notice });
        const title = view.status === 'paid' ? `Paid · ${view.payee.name}` : view.status === 'open' ? `Pay ${view.payee.name}` : `${view.payee.name} · ${view.status}`;
        const res = pageResponse(200, title, body, {}, checkoutCsp(nonce));
        if (csrf?.setCookie) res.headers.append('Set-Cookie', csrf.setCookie);
        return res;
      }),
    )
    .post(
      '/pay/:short_code/simnet-pay',
      page(services, async ({ request, params }) => {
        const found = await paylinkByShortCode(services, params.short_code!);
        if (!found) return notFound('Payment request', 'Check the link you were given: it ends in a 10-character code.');
        if (!faucetOn()) return problemPage(404, 'No test payer here', 'Paying from a faucet-funded test wallet exists only on simnet, the local test chain.', 'Pay with a Solana wallet: open the payment page again and use its button or QR code.', {}, { 'X-Robots-Tag': 'noindex' });
        const form = await readForm(request);
        if (!validAnonymousCsrf(request, form.get('csrf'))) {
          return problemPage(403, 'Form expired', 'This form was refused because its security token is missing or does not match (CSRF protection).', 'Go back, reload the page and submit the form again.');
        }
        const back = `/pay/${found.short_code}`;
        const row = (await getPaylink(services.db, found.request_id)) ?? found;
        const view = await publicPaylinkView(services, row);
        if (view.status !== 'open') return redirect(back);
        let micro = row.amount;
        if (micro === null) {
          const asked = parseUsdc(form.get('amount') ?? '');
          if (!asked.ok || asked.micro <= 0n) return problemPage(400, 'Amount needed', `This request lets the payer choose the amount; the amount given ${asked.ok ? 'must be greater than 0' : asked.reason}.`, 'Go back and enter an amount in USDC, such as 5 or 0.25.');
          micro = asked.micro;
        }
        try {
          const signature = await payAsSimnetTestWallet(services, row, view.pay_to as Address, micro);
          services.log.info('simnet test payer paid a paylink', { request_id: row.request_id, signature });
        } catch (err) {
          services.log.warn('simnet test payer failed', { request_id: row.request_id, error: (err as Error).message });
          return problemPage(503, 'Test payment failed', 'The simnet faucet or chain did not take the test payment.', 'Try again in a moment.');
        }
        // Judge it now, as the deposit watch and the page's poll would a moment later.
        await scanPaylink(services, row.request_id).catch((err: Error) => services.log.debug('paylink scan after a simnet payment failed', { request_id: row.request_id, error: err.message }));
        return redirect(`${back}?done=simnet`);
      }),
      { parse: 'none' },
    )
    .get(
      '/pay/:short_code/receipt',
      page(services, async ({ params }) => {
        const found = await paylinkByShortCode(services, params.short_code!);
        const row = found ? ((await getPaylink(services.db, found.request_id)) ?? found) : null;
        const receipt = row ? await payerReceipt(services, row) : null;
        if (!receipt) return problemPage(404, 'No receipt yet', 'A receipt is given once the payment request is paid; this one is not (or the link is wrong).', 'Open the payment page: it links the receipt as soon as the payment is seen.', {}, { 'X-Robots-Tag': 'noindex' });
        return pageResponse(200, `Receipt · ${receipt.payee_name}`, receiptPage(receipt), {}, { 'X-Robots-Tag': 'noindex' });
      }),
    )
    .get('/pay/:short_code/receipt.jws', async ({ params }) => {
      const found = await paylinkByShortCode(services, params.short_code!);
      const row = found ? ((await getPaylink(services.db, found.request_id)) ?? found) : null;
      const receipt = row ? await payerReceipt(services, row) : null;
      if (!receipt) return new Response('No paid payment request has this link.\n', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-robots-tag': 'noindex' } });
      return new Response(`${receipt.jws}\n`, {
        headers: { 'content-type': 'application/jose', 'content-disposition': `attachment; filename="receipt-${receipt.claims.sub}.jws"`, 'cache-control': 'no-store', 'x-robots-tag': 'noindex' },
      });
    })
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
