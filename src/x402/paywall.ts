/**
 * `agent-wallet merchant gate`: an x402 paywall in front of a merchant's plain HTTP API, for
 * merchants without their own middleware (DESIGN §8.1). A reverse proxy: a request on a priced
 * route without payment answers 402 with the requirements of both versions (v2 in the
 * `PAYMENT-REQUIRED` header, v1 in the body); with payment (`PAYMENT-SIGNATURE` or `X-PAYMENT`)
 * it verifies and settles through this daemon's facilitator with the merchant's key, and only a
 * settled payment goes upstream. Settlement comes first: the payer's money has moved before the
 * upstream is asked, so an upstream that then fails (down, 5xx) leaves a sale the merchant must
 * refund; it is recorded on the sale (`x402_refund_due`) and the payer is told so with the receipt.
 * Free routes (no price) pass through untouched.
 *
 * The v2 402 declares the payment-identifier extension (required with `paymentIdRequired`): a
 * payment sent again under the same id with the same bytes gets the first answer again (a buyer
 * retrying after a lost answer pays once and gets its answer); other bytes under that id are
 * refused. Answers are kept ten minutes, longer than a payment can land, in the gate's journal
 * (db/paywall-journal.ts), written before each step: a gate killed after a payment settled finds
 * it when it starts again. An answer it had kept is what the resend gets; a payment that settled
 * without one is recorded as the merchant's refund due (the upstream may or may not have acted on
 * it: asking again could do a paid action twice), and the resend gets the receipt and says so.
 */
import type { Database } from 'bun:sqlite';
import type { Address } from '@solana/kit';
import { sha256 } from '@noble/hashes/sha2.js';
import { ApiClient, ConnectionError } from '../client/api.ts';
import { crashPoint } from '../crash-points.ts';
import { journalAnswered, journalEntry, journalForget, JournalLockedError, journalPrune, journalSettled, journalStart, journalUnanswered, openPaywallJournal, type JournalRow } from '../db/paywall-journal.ts';
import { priceOf, routingPath, type PricedRoute } from '../domain/paywall-routes.ts';
import { checkTransaction } from './exact-transaction.ts';
import { decodeBase64Json, encodeBase64Json, PAYMENT_ID, PAYMENT_IDENTIFIER } from './wire.ts';
import { isObject } from '../domain/json.ts';
import { usdcAta } from '../solana/ata.ts';

export interface PaywallOptions {
  /** The daemon's API base (…/v1); the facilitator is at its origin's /x402/facilitator. */
  server: string;
  merchantKey: string;
  /** The plain HTTP API behind the paywall. */
  upstream: string;
  routes: readonly PricedRoute[];
  hostname: string;
  /** 0: any free port. */
  port: number;
  /** The v2 402 declares the payment-identifier extension as required. */
  paymentIdRequired?: boolean;
  /** The journal's file (":memory:": kept for this process only); one gate a file. */
  journal: string;
  log: (line: Record<string, unknown>) => void;
}

export interface Paywall {
  url: string;
  payTo: string;
  /** What stops a local setup from selling, found at start ({@link localSetupWarnings}); the gate runs anyway. */
  warnings: string[];
  stop: () => Promise<void>;
}

/** What the facilitator serves this merchant, learnt once at start. */
interface Terms {
  payTo: string;
  asset: string;
  v2: { network: string; feePayer: string } | null;
  v1: { network: string; feePayer: string } | null;
  /** The merchant's username (the register probe of {@link localSetupWarnings} names it). */
  username: string;
  /** The daemon's embedded chain (ping's rpc_url: simnet only); null elsewhere. */
  rpcUrl: string | null;
}

/** The paywall could not start: the daemon refused or did not answer, the port is taken, or another gate holds the journal. */
export class PaywallStartError extends ConnectionError {}

/** An answer as the journal keeps it: what a resend of the same payment gets again. */
interface Kept {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
}

/** A paid request's payment, as the journal knows it. */
interface Payment {
  /** `id:` + its identifier, or `tx:` + its header's hash. */
  key: string;
  headerHash: Uint8Array;
  id: string | null;
  receiptName: 'payment-response' | 'x-payment-response';
  network: string;
}

const KEEP_MS = 10 * 60_000;
/** How often the gate looks at payments left halfway (by a gate that stopped, or by an error); a start looks at once. */
const RESOLVE_EVERY_MS = 15_000;
/**
 * A payment left while being settled that the merchant's books do not show may still be settling
 * (the daemon fails a sale that has not landed after 3 minutes): only older than this is it taken
 * as never settled and forgotten.
 */
const UNSETTLED_AFTER_MS = 5 * 60_000;

const replay = (a: Kept) => new Response(a.body.slice(), { status: a.status, headers: a.headers });
const keptOf = (r: JournalRow): Kept => ({ status: r.status!, headers: JSON.parse(r.headers!) as [string, string][], body: r.body! });
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
/** The payment-identifier extension as `@x402/extensions` declares it. */
const paymentIdDeclaration = (required: boolean) => ({
  info: { required },
  schema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { required: { type: 'boolean' }, id: { type: 'string', minLength: 16, maxLength: 128, pattern: '^[a-zA-Z0-9_-]+$' } },
    required: ['required'],
  },
});

/** Hop-by-hop headers a proxy must not forward (RFC 9110 §7.6.1), and the payment headers. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'content-length', 'payment-signature', 'x-payment']);

export async function startPaywall(o: PaywallOptions): Promise<Paywall> {
  const facilitator = `${new URL(o.server).origin}/x402/facilitator`;
  const auth = { authorization: `Bearer ${o.merchantKey}` };
  const terms = await learnTerms(o, facilitator, auth);
  const upstream = new URL(o.upstream);
  const merchant = new ApiClient(o.server, o.merchantKey);
  let journal: Database;
  try {
    journal = openPaywallJournal(o.journal);
  } catch (err) {
    if (err instanceof JournalLockedError) throw new PaywallStartError(`${err.message}; stop that gate first, or give this one a journal of its own (--journal FILE)`);
    throw err;
  }
  /**
   * Payments being answered now, by journal key; the resolver leaves them alone. A resend of one
   * with an identifier waits for its answer (null: none was kept, it goes again).
   */
  const inflight = new Map<string, { headerHash: Uint8Array; answer: Promise<Kept | null> }>();

  async function post(path: 'verify' | 'settle', body: unknown): Promise<Record<string, any>> {
    const res = await fetch(`${facilitator}/${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json().catch(() => null)) as unknown;
    if (!res.ok || !isObject(json)) throw new Error(`the facilitator's ${path} answered HTTP ${res.status}`);
    return json;
  }

  function requirements(route: PricedRoute, resource: string) {
    const base = { scheme: 'exact', asset: terms.asset, payTo: terms.payTo, maxTimeoutSeconds: 60 };
    return {
      v2: terms.v2 ? { ...base, network: terms.v2.network, amount: route.price.toString(), extra: { feePayer: terms.v2.feePayer } } : null,
      v1: terms.v1
        ? { ...base, network: terms.v1.network, maxAmountRequired: route.price.toString(), resource, description: route.text, mimeType: '', extra: { feePayer: terms.v1.feePayer } }
        : null,
    };
  }

  function paymentRequired(route: PricedRoute, resource: string, error: string, extraHeaders: Record<string, string> = {}): Response {
    const req = requirements(route, resource);
    const headers: Record<string, string> = { 'content-type': 'application/json', ...extraHeaders };
    if (req.v2) {
      const challenge = { x402Version: 2, error, resource: { url: resource, description: route.text, mimeType: '' }, accepts: [req.v2], extensions: { [PAYMENT_IDENTIFIER]: paymentIdDeclaration(o.paymentIdRequired === true) } };
      headers['payment-required'] = encodeBase64Json(challenge);
    }
    return new Response(JSON.stringify({ x402Version: 1, error, accepts: req.v1 ? [req.v1] : [] }), { status: 402, headers });
  }

  async function forward(request: Request, url: URL): Promise<Response> {
    // Concatenated, never resolved: a path like ///host must not choose another host.
    const target = new URL(`${upstream.href.replace(/\/+$/, '')}${url.pathname}${url.search}`);
    const headers = new Headers();
    request.headers.forEach((value, name) => {
      if (!NOT_FORWARDED.has(name.toLowerCase())) headers.set(name, value);
    });
    // Both bodies stream through (no size the paywall has to hold); a kept answer is the exception (keptAnswer).
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body;
    const res = await fetch(target, { method: request.method, headers, body, redirect: 'manual', duplex: 'half' } as RequestInit);
    const out = new Headers(res.headers);
    for (const name of ['content-encoding', 'content-length', 'transfer-encoding', 'connection']) out.delete(name);
    return new Response(res.body, { status: res.status, headers: out });
  }

  async function paid(request: Request, url: URL, route: PricedRoute, resource: string): Promise<Response> {
    const v2Header = request.headers.get('payment-signature');
    const header = v2Header ?? request.headers.get('x-payment');
    const version = v2Header ? 2 : 1;
    let payload: unknown;
    try {
      payload = decodeBase64Json(header!);
    } catch {
      return paymentRequired(route, resource, `the ${v2Header ? 'PAYMENT-SIGNATURE' : 'X-PAYMENT'} header is not base64 JSON`);
    }
    const req = requirements(route, resource);
    const wanted = version === 2 ? req.v2 : req.v1;
    if (!isObject(payload) || payload.x402Version !== version || !wanted) return paymentRequired(route, resource, `an x402 v${version} payment is not accepted here`);
    // v2 names the option it pays; it must be this route's, field for field.
    if (version === 2) {
      const accepted = payload.accepted;
      const same = isObject(accepted) && (['scheme', 'network', 'amount', 'asset', 'payTo'] as const).every((k) => accepted[k] === (wanted as Record<string, unknown>)[k]);
      if (!same) return paymentRequired(route, resource, "the payment's accepted option is not this route's requirements");
    }
    const id = version === 2 && isObject(payload.extensions) && isObject(payload.extensions[PAYMENT_IDENTIFIER]) && isObject(payload.extensions[PAYMENT_IDENTIFIER].info) ? payload.extensions[PAYMENT_IDENTIFIER].info.id : undefined;
    if (id !== undefined && (typeof id !== 'string' || !PAYMENT_ID.test(id))) return paymentRequired(route, resource, 'the payment identifier must be 16–128 letters, digits, - or _');
    if (id === undefined && version === 2 && o.paymentIdRequired) return paymentRequired(route, resource, 'a payment identifier is required (the payment-identifier extension)');
    const headerHash = sha256(new TextEncoder().encode(header!));
    const pay: Payment = {
      key: typeof id === 'string' ? `id:${id}` : `tx:${hex(headerHash)}`,
      headerHash,
      id: typeof id === 'string' ? id : null,
      receiptName: version === 2 ? 'payment-response' : 'x-payment-response',
      network: String(wanted.network),
    };
    return once(pay, () => settleAndForward(request, url, route, resource, version, payload as Record<string, any>, wanted, pay), route, resource);
  }

  /** Runs `work` as payment `key`'s answer in flight; the entry goes when it is done. */
  function track(key: string, headerHash: Uint8Array, work: Promise<Kept | null>) {
    const entry = { headerHash, answer: work };
    inflight.set(key, entry);
    const done = () => void (inflight.get(key) === entry && inflight.delete(key));
    work.then(done, done);
    return entry;
  }

  /**
   * A payment answered once: a resend of the same bytes gets the kept answer (or waits for it),
   * other bytes under the same identifier are refused, a payment left halfway is resolved first.
   */
  async function once(pay: Payment, run: () => Promise<Kept | Response>, route: PricedRoute, resource: string): Promise<Response> {
    const conflict = () => paymentRequired(route, resource, 'payment_identifier_conflict: this payment identifier was used with another payment');
    for (;;) {
      let running = inflight.get(pay.key);
      if (!running) {
        const row = journalEntry(journal, pay.key);
        if (row && !sameBytes(row.header_hash, pay.headerHash)) return conflict();
        if (row?.state === 'answered') return replay(keptOf(row));
        if (row) running = track(pay.key, row.header_hash, resolveLeft(row));
      }
      if (!running) break;
      if (!sameBytes(running.headerHash, pay.headerHash)) return conflict();
      // Without an identifier the answer streams and is not kept: the facilitator refuses the resend as it always did.
      if (pay.id === null) return paymentRequired(route, resource, 'duplicate_settlement: this payment is being settled already');
      const answer = await running.answer;
      if (answer) return replay(answer);
    }
    const work = run();
    track(pay.key, pay.headerHash, work.then((r) => (r instanceof Response ? null : r)));
    const r = await work;
    return r instanceof Response ? r : replay(r);
  }

  /**
   * A payment left before its answer (its gate stopped, or an error): settled, it is the
   * merchant's refund due and the notice is its answer; never settled, it is forgotten (null) and
   * a resend pays as new; not known yet, the resend is asked to come back.
   */
  async function resolveLeft(row: JournalRow): Promise<Kept | null> {
    let { transaction, receipt } = row;
    if (row.state === 'settling') {
      const sale = await merchant.call<{ paid: boolean; signature: string | null; payer_address: string | null }>('merchant', 'verify', { reference: `x402:${row.payment_id}` });
      if (sale.paid && sale.signature && sale.payer_address === row.payer) {
        transaction = sale.signature;
        receipt = encodeBase64Json({ success: true, transaction, network: row.network, payer: row.payer });
      } else if (Date.now() - row.created_at > UNSETTLED_AFTER_MS) {
        journalForget(journal, row.key);
        return null;
      } else {
        const body = { error: 'payment_being_resolved', message: 'The paywall stopped while this payment was being settled, and whether it settled is not known yet. Send the same payment again later: it is never charged twice.' };
        return { status: 503, headers: [['content-type', 'application/json'], ['retry-after', '30']], body: new TextEncoder().encode(JSON.stringify(body)) };
      }
    }
    const reason = 'the payment settled but the paywall did not deliver its answer (it stopped or failed first)';
    if (!(await refundDue(transaction!, reason))) throw new Error(`the refund due of ${transaction} could not be recorded`);
    const body = { error: 'answer_lost', message: `${reason}. The payment settled (transaction ${transaction}); the merchant has it recorded as a refund due.` };
    const kept: Kept = { status: 502, headers: [['content-type', 'application/json'], [row.receipt_name, receipt!]], body: new TextEncoder().encode(JSON.stringify(body)) };
    journalAnswered(journal, row.key, kept);
    return kept;
  }

  /** Resolves every payment left halfway that nothing is answering now. */
  async function resolveAllLeft(): Promise<void> {
    for (const { key } of journalUnanswered(journal)) {
      // Read again: a request may have answered it while the ones before were being resolved.
      const row = journalEntry(journal, key);
      if (!row || row.state === 'answered' || inflight.has(key)) continue;
      try {
        await track(row.key, row.header_hash, resolveLeft(row)).answer;
      } catch (err) {
        o.log({ msg: 'a payment left halfway is not resolved yet', key: row.key, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  async function settleAndForward(request: Request, url: URL, route: PricedRoute, resource: string, version: 1 | 2, payload: Record<string, any>, wanted: Record<string, any>, pay: Payment): Promise<Kept | Response> {
    const body = { x402Version: version, paymentPayload: payload, paymentRequirements: wanted };
    // The payment's own checks first: a header that could never pay does not reach the facilitator.
    const local = await checkTransaction(isObject(payload.payload) ? payload.payload.transaction : undefined, {
      mint: terms.asset,
      payTo: terms.payTo,
      amount: route.price,
      feePayer: String(isObject(wanted.extra) ? wanted.extra.feePayer : ''),
    });
    if (!local.ok) return paymentRequired(route, resource, local.reason);
    const verified = await post('verify', body);
    if (verified.isValid !== true) return paymentRequired(route, resource, String(verified.invalidReason ?? 'invalid_payment'));
    const now = Date.now();
    journalPrune(journal, now - KEEP_MS);
    const entry = { key: pay.key, header_hash: pay.headerHash, payment_id: pay.id, payer: String(verified.payer ?? ''), receipt_name: pay.receiptName, network: pay.network, created_at: now };
    // With an identifier, written before the facilitator is asked: a gate stopped meanwhile finds the sale by it.
    if (pay.id !== null) journalStart(journal, { ...entry, state: 'settling', transaction: null, receipt: null });
    // Should this throw, the row stays `settling`: the resolver asks the merchant's books whether it settled.
    const settled = await post('settle', body);
    crashPoint('paywall_settle_returned');
    const receipt = { success: settled.success === true, transaction: settled.transaction ?? '', network: settled.network ?? wanted.network, payer: settled.payer ?? verified.payer, ...(settled.errorReason ? { errorReason: settled.errorReason } : {}) };
    const receiptHeader = encodeBase64Json(receipt);
    if (settled.success !== true) {
      // Not settled: nothing goes upstream. A pending settlement may still land; if it does, the
      // buyer paid for an answer it did not get: the merchant's to refund, recorded now.
      const pending = settled.errorReason === 'settlement_pending' && typeof settled.transaction === 'string';
      if (pending) await refundDue(settled.transaction, 'the settlement was still pending when the request was answered; the upstream was not called');
      const refused = paymentRequired(route, resource, String(settled.errorReason ?? 'settlement_failed'), { [pay.receiptName]: receiptHeader });
      if (!pending || pay.id === null) {
        journalForget(journal, pay.key);
        return refused;
      }
      journalSettled(journal, pay.key, settled.transaction, receiptHeader);
      return keep(pay, refused);
    }
    if (pay.id === null) journalStart(journal, { ...entry, state: 'settled', transaction: String(settled.transaction), receipt: receiptHeader });
    else journalSettled(journal, pay.key, String(settled.transaction), receiptHeader);
    crashPoint('paywall_settled');
    let answer: Response;
    try {
      answer = await forward(request, url);
    } catch (err) {
      return delivered(pay, await upstreamFailed(pay.receiptName, receipt, `the upstream did not answer: ${err instanceof Error ? err.message : String(err)}`));
    }
    if (answer.status >= 500) {
      // Its body (streamed, unread) is not passed on: let the upstream connection go.
      void answer.body?.cancel();
      return delivered(pay, await upstreamFailed(pay.receiptName, receipt, `the upstream answered HTTP ${answer.status}`));
    }
    answer.headers.set(pay.receiptName, receiptHeader);
    o.log({ msg: 'sold', route: route.text, path: url.pathname, transaction: receipt.transaction, payer: receipt.payer, status: answer.status });
    return delivered(pay, answer);
  }

  /** A settled payment's answer: kept before it is sent (with an identifier), or streamed (without; the journal lets it go). */
  async function delivered(pay: Payment, answer: Response): Promise<Kept | Response> {
    if (pay.id !== null) return keep(pay, answer);
    journalForget(journal, pay.key);
    return answer;
  }

  async function keep(pay: Payment, answer: Response): Promise<Kept> {
    const kept: Kept = { status: answer.status, headers: [...answer.headers], body: new Uint8Array(await answer.arrayBuffer()) };
    journalAnswered(journal, pay.key, kept);
    crashPoint('paywall_answer_kept');
    return kept;
  }

  /** Records the sale as the merchant's refund due; false when the daemon did not take it (the log keeps the reason). */
  async function refundDue(transaction: string, reason: string): Promise<boolean> {
    try {
      await merchant.call('merchant', 'x402_refund_due', { transaction, reason });
    } catch (err) {
      o.log({ msg: 'recording a refund failed', transaction, reason, error: err instanceof Error ? err.message : String(err) });
      return false;
    }
    o.log({ msg: 'refund due', transaction, reason });
    return true;
  }

  async function upstreamFailed(receiptName: string, receipt: Record<string, unknown>, reason: string): Promise<Response> {
    await refundDue(String(receipt.transaction), reason);
    const body = { error: 'upstream_failed', message: `${reason}. The payment settled (transaction ${String(receipt.transaction)}); the merchant has it recorded as a refund due.` };
    return new Response(JSON.stringify(body), { status: 502, headers: { 'content-type': 'application/json', [receiptName]: encodeBase64Json(receipt) } });
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const routing = routingPath(url.pathname);
    if (!routing.ok) return ambiguousPath(routing.reason);
    const route = priceOf(o.routes, request.method, routing.path);
    try {
      if (!route) return await forward(request, url);
      const resource = url.href;
      if (!request.headers.get('payment-signature') && !request.headers.get('x-payment')) return paymentRequired(route, resource, 'payment required');
      return await paid(request, url, route, resource);
    } catch (err) {
      o.log({ msg: 'request failed', path: url.pathname, error: err instanceof Error ? err.message : String(err) });
      return new Response(JSON.stringify({ error: 'paywall_error', message: err instanceof Error ? err.message : String(err) }), { status: 502, headers: { 'content-type': 'application/json' } });
    }
  }

  let server: ReturnType<typeof Bun.serve>;
  try {
    // Settlement waits for the chain (up to ~15 s) before the upstream is asked.
    server = serve({ hostname: o.hostname, port: o.port, idleTimeout: 60, fetch: handle });
  } catch (err) {
    journal.close();
    throw err;
  }
  void resolveAllLeft();
  const resolver = setInterval(() => void resolveAllLeft(), RESOLVE_EVERY_MS);
  const url = `http://${o.hostname}:${server.port}`;
  return {
    url,
    payTo: terms.payTo,
    warnings: await localSetupWarnings(o.server, terms, url),
    stop: async () => {
      clearInterval(resolver);
      await server.stop(true);
      journal.close();
    },
  };
}

/**
 * What keeps a gate from selling on a local setup, said at start (issue 43); each check that cannot
 * be made is skipped, never fatal.
 *
 * - The payout address has no USDC token account: the exact scheme pays an existing token account
 *   of `payTo`, so the facilitator refuses every payment until one exists. Checked on the daemon's
 *   embedded chain (ping's `rpc_url`, simnet); a hosted RPC is not asked.
 * - The daemon refuses to contact the gate's address (loopback or private, not in
 *   `outbound.allow_hosts`): its agents' `x402 fetch` of the gate fails before paying. The daemon
 *   publishes no policy, so the gate asks the one unauthenticated check that applies the same rule
 *   without a side effect: `register` with the gate's URL as `webhook_url` and the merchant's own
 *   username, which is taken, so nothing is ever created; the URL is judged first (a refusal names
 *   `/webhook_url`), the username after it.
 */
export async function localSetupWarnings(server: string, terms: Pick<Terms, 'payTo' | 'asset' | 'username' | 'rpcUrl'>, gateUrl: string): Promise<string[]> {
  const warnings: string[] = [];
  if (terms.rpcUrl) {
    try {
      const ata = await usdcAta(terms.payTo as Address, terms.asset as Address);
      const res = await fetch(terms.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [ata, { encoding: 'base64', commitment: 'confirmed' }] }),
      });
      const json = (await res.json()) as { result?: { value: unknown } };
      if (json.result && json.result.value === null) {
        warnings.push(
          `the payout address ${terms.payTo} has no USDC token account yet, so every payment to this gate is refused (the exact scheme pays an existing token account). ` +
            `Create it once: on simnet \`agent-wallet admin faucet ${terms.payTo} 0.01\` (with the daemon's --data-dir); elsewhere send the address any amount of USDC once, ` +
            `or \`spl-token create-account ${terms.asset} --owner ${terms.payTo}\`.`,
        );
      }
    } catch {
      // The chain did not answer: nothing to say about it here; the facilitator says it per payment.
    }
  }
  try {
    const res = await fetch(`${server.replace(/\/+$/, '')}/merchant`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'register', name: 'gate reachability check', username: terms.username, payout_address: terms.payTo, webhook_url: gateUrl }),
    });
    const json = (await res.json()) as { success?: boolean; error?: { details?: { field?: string }; message?: string } };
    const field = json.error?.details?.field ?? (json.error?.message?.startsWith('/webhook_url') ? '/webhook_url' : undefined);
    if (json.success === false && field === '/webhook_url') {
      const host = new URL(gateUrl).hostname;
      warnings.push(
        `the daemon refuses to contact ${gateUrl} (${json.error?.message ?? 'a private address'}), so its agents' \`x402 fetch\` of this gate fails before paying. ` +
          `For a local setup the operator lists the host in outbound.allow_hosts (config.toml [outbound] allow_hosts = ["${host}"], or AGENT_WALLET_OUTBOUND_ALLOW_HOSTS=${host}) and restarts the daemon.`,
      );
    }
  } catch {
    // The daemon did not answer the check: the gate started, so it answers the rest; nothing to say.
  }
  return warnings;
}

/** A path upstreams would route in different ways: whether it is priced cannot be told, so it goes nowhere. */
function ambiguousPath(reason: string): Response {
  const body = { error: 'ambiguous_path', message: `The path ${reason}; the paywall cannot tell which route it reaches.`, how_to_fix: 'Send the path without that escape (a plain "/" between segments, UTF-8 escapes only).' };
  return new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } });
}

/** Bun.serve, with a taken port said as the flag to change. */
function serve(options: Parameters<typeof Bun.serve>[0] & { port: number }): ReturnType<typeof Bun.serve> {
  try {
    return Bun.serve(options);
  } catch (err) {
    if ((err as { code?: string }).code === 'EADDRINUSE') throw new PaywallStartError(`port ${options.port} is taken; pass --port with another port (0: any free port)`);
    throw err;
  }
}

async function learnTerms(o: PaywallOptions, facilitator: string, auth: Record<string, string>): Promise<Terms> {
  let supported: unknown;
  try {
    const res = await fetch(`${facilitator}/supported`, { headers: auth });
    if (res.status === 401) throw new PaywallStartError('the daemon refused the merchant key; check the merchant profile (agent-wallet merchant info)');
    supported = await res.json();
  } catch (err) {
    if (err instanceof PaywallStartError) throw err;
    throw new PaywallStartError(`the daemon's facilitator at ${facilitator} did not answer: ${err instanceof Error ? err.message : String(err)}`);
  }
  const kinds = isObject(supported) && Array.isArray(supported.kinds) ? (supported.kinds as Record<string, any>[]) : [];
  const kind = (v: number) => {
    const k = kinds.find((x) => x.x402Version === v && x.scheme === 'exact');
    return k && typeof k.network === 'string' && isObject(k.extra) && typeof k.extra.feePayer === 'string' ? { network: k.network, feePayer: k.extra.feePayer as string } : null;
  };
  const [info, ping] = await Promise.all([
    new ApiClient(o.server, o.merchantKey).call<{ payout_address: string; username: string }>('merchant', 'info'),
    new ApiClient(o.server).call<{ usdc_mint: string; rpc_url?: string }>('bot', 'ping'),
  ]);
  const terms = { payTo: info.payout_address, asset: ping.usdc_mint, v2: kind(2), v1: kind(1), username: info.username, rpcUrl: ping.rpc_url ?? null };
  if (!terms.v2 && !terms.v1) throw new PaywallStartError("the daemon's network has no x402 network id; x402 cannot be sold on it");
  return terms;
}
