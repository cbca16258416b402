/**
 * Authorization matrix, generated from the action table: every action × {no key, bot A, bot B,
 * merchant A, merchant B, owner A, owner B} against A's objects → allow or deny as expected.
 * An action without a row here fails the test, so a new action cannot ship unreviewed.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { generateKeyPairSigner } from '@solana/kit';
import { actionTable } from '../../src/actions/index.ts';
import { createApp } from '../../src/api/app.ts';
import type { AuthKind } from '../../src/contract/action.ts';
import { newId } from '../../src/contract/ids.ts';
import { ensureOwner, insertOwnerToken } from '../../src/db/owners.ts';
import { newApiKey } from '../../src/domain/api-keys.ts';
import { AGENT_ID } from '../../src/frost/ids.ts';
import { decodeSecretState } from '../../src/frost/codec.ts';
import { commit } from '../../src/frost/party.ts';
import { Secret } from '../../src/frost/secret.ts';
import type { KeyPackage } from '../../src/frost/types.ts';
import { encodeCommitments } from '../../src/frost/wire.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

type Who = 'none' | 'botA' | 'botB' | 'merchantA' | 'merchantB' | 'ownerA' | 'ownerB';
const WHO: Who[] = ['none', 'botA', 'botB', 'merchantA', 'merchantB', 'ownerA', 'ownerB'];

/** A's objects that actions are aimed at. */
interface Objects {
  walletA: string;
  txA: string;
  /** A pre-approved payment of A with an open signing session. */
  signingTxA: string;
  approvalA: string;
  withdrawalA: string;
  withdrawalTxA: string;
  requestA: string;
  exportA: string;
  /** A second wallet of owner A, whose bot key the matrix rotates (A's own key stays usable). */
  spareWalletA: string;
  eventA: string;
  deliveryA: string;
  merchantRequestA: string;
  merchantEventA: string;
  fundRequestA: string;
  /** An enrollment of owner A's recovery kit for wallet A. */
  enrollmentA: string;
  tokenA: string;
  usernameB: string;
  external: string;
}

/**
 * One row per action: its params aimed at A's objects, and `ofA` when those params name an object
 * that belongs to A (then B's principal of the same kind must get NOT_FOUND, not the object).
 */
interface Row {
  params: (o: Objects) => Record<string, unknown>;
  ofA: boolean;
}

const fakeFetch = `x402_${'0'.repeat(26)}`;
const commitments = { identifier: AGENT_ID, hiding: '58'.repeat(32), binding: '58'.repeat(32) };
const share = { identifier: AGENT_ID, share: '01'.padEnd(64, '0') };

const ROWS: Record<string, Row> = {
  'bot/ping': { params: () => ({}), ofA: false },
  'bot/dkg_init': { params: () => ({ round1: { identifier: AGENT_ID, commitment: ['00'.repeat(32), '00'.repeat(32)], proof_of_knowledge: '00'.repeat(64) } }), ofA: false },
  'bot/dkg_complete': { params: () => ({ dkg_session_id: `dkg_${'0'.repeat(26)}`, round2: { identifier: AGENT_ID, signing_share: '01'.repeat(32) }, commitments }), ofA: false },
  'bot/register': { params: () => ({ dkg_session_id: `dkg_${'0'.repeat(26)}`, proof_signature: '00'.repeat(64), name: 'x' }), ofA: false },
  'bot/wallet_import_key': { params: (o) => ({ export_id: o.exportA, import_token: 'imp_wrongwrongwrongwrongwrong' }), ofA: false },
  'bot/info': { params: () => ({}), ofA: false },
  'bot/update_owner': { params: () => ({ owner_email: 'x@example.com' }), ofA: false },
  'bot/update_name': { params: () => ({ name: 'Renamed' }), ofA: false },
  'bot/balance': { params: () => ({}), ofA: false },
  'bot/reconcile': { params: () => ({}), ofA: false },
  'bot/get_deposit_address': { params: () => ({}), ofA: false },
  'bot/wallet_export': { params: () => ({}), ofA: false },
  'bot/lookup': { params: (o) => ({ username: o.usernameB }), ofA: false },
  'bot/can_i_afford': { params: (o) => ({ to: o.usernameB, amount: 1 }), ofA: false },
  'bot/pay': { params: (o) => ({ to: o.external, amount: 0.5 }), ofA: false },
  'bot/confirm_payment': { params: (o) => ({ transaction_id: o.txA }), ofA: true },
  'bot/frost_sign_init': { params: (o) => ({ transaction_id: o.txA, commitments }), ofA: true },
  'bot/frost_sign_complete': { params: (o) => ({ transaction_id: o.signingTxA, signature_share: share }), ofA: true },
  'bot/submit_signed_tx': { params: (o) => ({ transaction_id: o.txA }), ofA: true },
  'bot/list_payments': { params: () => ({}), ofA: false },
  'bot/cancel_payment': { params: (o) => ({ transaction_id: o.txA }), ofA: true },
  'bot/transactions': { params: () => ({}), ofA: false },
  'bot/events': { params: () => ({}), ofA: false },
  'bot/mark_read': { params: (o) => ({ event_ids: [o.eventA] }), ofA: false },
  'bot/withdraw': { params: (o) => ({ amount: 0.5, to_address: o.external, reason: 'matrix' }), ofA: false },
  'bot/confirm_withdrawal': { params: (o) => ({ transaction_id: o.withdrawalTxA }), ofA: true },
  'bot/get_withdrawal': { params: (o) => ({ withdrawal_id: o.withdrawalA }), ofA: true },
  'bot/my_limits': { params: () => ({}), ofA: false },
  'bot/pending_approvals': { params: () => ({}), ofA: false },
  // Its own wallet only: there is no wallet parameter to aim at another tenant's.
  'bot/freeze': { params: () => ({ reason: 'matrix' }), ofA: false },
  'bot/approval_status': { params: (o) => ({ approval_id: o.approvalA }), ofA: true },
  'bot/x402_prepare': { params: () => ({ url: 'http://127.0.0.1:9/paid' }), ofA: false },
  'bot/x402_confirm': { params: () => ({ fetch_id: fakeFetch, commitments }), ofA: false },
  'bot/x402_sign_complete': { params: () => ({ fetch_id: fakeFetch, signature_share: share }), ofA: false },
  'bot/x402_settle': { params: () => ({ fetch_id: fakeFetch }), ofA: false },
  'bot/x402_status': { params: () => ({ fetch_id: fakeFetch }), ofA: false },
  'bot/x402_prepare_tool': { params: () => ({ server: 'matrix-tools', tool: 'analyze', payment_required: { x402Version: 2, accepts: [] } }), ofA: false },
  'bot/x402_payment': { params: () => ({ fetch_id: fakeFetch }), ofA: false },
  'bot/x402_receipt': { params: () => ({ fetch_id: fakeFetch }), ofA: false },
  'bot/x402_sign_in': { params: () => ({ sign_in_id: `siwx_${'0'.repeat(26)}`, commitments }), ofA: false },
  'bot/get_receipt': { params: (o) => ({ transaction_id: o.txA }), ofA: true },
  'bot/x402_sign_in_complete': { params: () => ({ sign_in_id: `siwx_${'0'.repeat(26)}`, signature_share: share }), ofA: false },
  'bot/create_payment_request': { params: () => ({ description: 'matrix', amount: 1 }), ofA: false },
  'bot/get_payment_request': { params: (o) => ({ request_id: o.requestA }), ofA: true },
  'bot/list_payment_requests': { params: () => ({}), ofA: false },
  'bot/cancel_payment_request': { params: (o) => ({ request_id: o.requestA }), ofA: true },
  'bot/send_paylink_invitation': { params: (o) => ({ request_id: o.requestA, to_wallet: o.usernameB }), ofA: true },
  'bot/request_funds': { params: () => ({ amount: 1, reason: 'matrix' }), ofA: false },
  'bot/list_fund_requests': { params: () => ({}), ofA: false },
  'bot/revoke_export': { params: (o) => ({ export_id: o.exportA }), ofA: true },
  'merchant/register': { params: () => ({ name: 'M', username: `m-${Math.floor(Math.random() * 1e9)}`, payout_address: '11111111111111111111111111111112' }), ofA: false },
  'merchant/info': { params: () => ({}), ofA: false },
  'merchant/balance': { params: () => ({}), ofA: false },
  'merchant/verify': { params: () => ({ reference: 'order-1' }), ofA: false },
  'merchant/history': { params: () => ({}), ofA: false },
  // A sale or a transaction another merchant's is as unknown as a made-up one.
  'merchant/get_receipt': { params: () => ({ transaction_id: `sale_${'0'.repeat(26)}` }), ofA: false },
  'merchant/x402_refund_due': { params: () => ({ transaction: '1'.repeat(64), reason: 'matrix' }), ofA: false },
  'merchant/sale_fees': { params: () => ({}), ofA: false },
  'merchant/pay_sale_fees': { params: () => ({}), ofA: false },
  'merchant/set_webhook': { params: () => ({ url: 'http://127.0.0.1:9/hook' }), ofA: false },
  'merchant/rotate_webhook_secret': { params: () => ({}), ofA: false },
  'merchant/webhook_deliveries': { params: () => ({}), ofA: false },
  'merchant/redeliver': { params: (o) => ({ delivery_id: o.deliveryA }), ofA: true },
  'merchant/create_payment_request': { params: () => ({ description: 'matrix', amount: 1 }), ofA: false },
  'merchant/get_payment_request': { params: (o) => ({ request_id: o.merchantRequestA }), ofA: true },
  'merchant/list_payment_requests': { params: () => ({}), ofA: false },
  'merchant/cancel_payment_request': { params: (o) => ({ request_id: o.merchantRequestA }), ofA: true },
  'merchant/send_paylink_invitation': { params: (o) => ({ request_id: o.merchantRequestA, to_wallet: o.usernameB }), ofA: true },
  'merchant/events': { params: () => ({}), ofA: false },
  'merchant/mark_read': { params: (o) => ({ event_ids: [o.merchantEventA] }), ofA: false },
  'public/claim_info': { params: (o) => ({ wallet_id: o.walletA }), ofA: false },
  'public/claim': { params: (o) => ({ wallet_id: o.walletA, claim_code: 'WRONG-CODE', email: 'x@example.com' }), ofA: false },
  'public/stats': { params: () => ({}), ofA: false },
  'public/x402_catalog': { params: () => ({}), ofA: false },
  'public/pay': { params: () => ({ short_code: 'NOPE' }), ofA: false },
  'public/pay_status': { params: () => ({ short_code: 'NOPE' }), ofA: false },
  'owner/wallets': { params: () => ({}), ofA: false },
  'owner/get_guard_rails': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'owner/set_guard_rails': { params: (o) => ({ wallet_id: o.walletA, rails: { approval_above: '1' } }), ofA: true },
  'owner/approvals': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'owner/approve': { params: (o) => ({ approval_id: o.approvalA }), ofA: true },
  'owner/reject': { params: (o) => ({ approval_id: o.approvalA }), ofA: true },
  'owner/fund_requests': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'owner/paylinks': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'owner/resolve_fund_request': { params: (o) => ({ fund_request_id: o.fundRequestA, decision: 'declined' }), ofA: true },
  'owner/audit_log': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'owner/tokens': { params: () => ({}), ofA: false },
  'owner/revoke_token': { params: (o) => ({ token_id: o.tokenA }), ofA: true },
  'owner/exports': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'owner/revoke_export': { params: (o) => ({ export_id: o.exportA }), ofA: true },
  'owner/rotate_api_key': { params: (o) => ({ wallet_id: o.spareWalletA }), ofA: true },
  'owner/recovery_status': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'owner/recovery_sweeps': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'owner/recovery_sweep_start': { params: (o) => ({ wallet_id: o.walletA, to_address: o.external }), ofA: true },
  'owner/recovery_sweep_cancel': { params: () => ({ sweep_id: `rsw_${'0'.repeat(26)}` }), ofA: false },
  'owner/recovery_sweep_sign': { params: () => ({ sweep_id: `rsw_${'0'.repeat(26)}`, commitments: {} }), ofA: false },
  'owner/recovery_sweep_complete': { params: () => ({ sweep_id: `rsw_${'0'.repeat(26)}`, sign_session_id: 'sig_x', signature_share: {} }), ofA: false },
  'owner/recovery_enroll_collect': { params: (o) => ({ enrollment_id: o.enrollmentA }), ofA: true },
  'owner/recovery_enroll_finish': { params: (o) => ({ enrollment_id: o.enrollmentA, fingerprint: 'AAAA-BBBB-CCCC-DDDD-EEEE' }), ofA: true },
  'owner/recovery_enroll_start': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'owner/recovery_refresh_allow': { params: (o) => ({ wallet_id: o.walletA }), ofA: true },
  'bot/recovery_enroll_split': { params: (o) => ({ enrollment_id: o.enrollmentA, piece: '05'.padEnd(64, '0') }), ofA: true },
  'bot/recovery_refresh_init': { params: () => ({ contribution: '05'.padEnd(64, '0') }), ofA: false },
  'bot/recovery_refresh_commit': { params: () => ({ refresh_id: `kr_${'0'.repeat(26)}`, public_package: {}, share_proof: '0'.repeat(128) }), ofA: false },
  'bot/recovery_enroll_deliver': { params: (o) => ({ enrollment_id: o.enrollmentA, box: Buffer.from('a sealed box').toString('base64') }), ofA: true },
};

let world: World;
let receiver: ReturnType<typeof Bun.serve>;
let objects: Objects;
const keys = {} as Record<Who, string | undefined>;

const key = (a: Agent) => new Secret(decodeSecretState(Buffer.from(a.profile.key_package, 'base64')) as KeyPackage);

async function ownerToken(email: string): Promise<{ key: string; tokenId: string }> {
  const key = newApiKey('owner');
  const tokenId = newId('ownerToken');
  await world.services.db
    .transaction(async () => {
      const { owner } = await ensureOwner(world.services.db, email, newId('owner'), Date.now());
      await insertOwnerToken(world.services.db, { token_id: tokenId, owner_id: owner.owner_id, token_hash: key.hash, label: 'matrix', now: Date.now() });
    });
  return { key: key.key, tokenId };
}

beforeAll(async () => {
  world = await startWorld({ env: { AGENT_WALLET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1' } });
  receiver = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('ok') });
  const a: Agent = await world.agent('A', { claimBy: 'a@example.com' });
  const b: Agent = await world.agent('B', { claimBy: 'b@example.com' });
  const spare: Agent = await world.agent('A2', { claimBy: 'a@example.com' });
  await world.fund(a.address, 100_000_000n);
  await world.fund(b.address, 100_000_000n);
  const ownerA = await world.ownerClient('a@example.com');
  await ownerA.call('owner', 'set_guard_rails', { wallet_id: a.walletId, rails: { approval_above: '1' } });
  const enrollment = await ownerA.call<any>('owner', 'recovery_enroll_start', { wallet_id: a.walletId });
  const external = (await generateKeyPairSigner()).address;
  const tx = await a.api.call<any>('bot', 'pay', { to: b.username, amount: 2 });
  const small = await a.api.call<any>('bot', 'pay', { to: b.username, amount: 0.5 });
  await a.api.call('bot', 'confirm_payment', { transaction_id: small.transaction_id });
  await a.api.call('bot', 'frost_sign_init', { transaction_id: small.transaction_id, commitments: encodeCommitments(commit(key(a)).commitments) });
  const wd = await a.api.call<any>('bot', 'withdraw', { amount: 1, to_address: external, reason: 'matrix' });
  const req = await a.api.call<any>('bot', 'create_payment_request', { description: 'matrix', amount: 3 });
  const fr = await a.api.call<any>('bot', 'request_funds', { amount: 5, reason: 'matrix' });
  const exp = await a.api.call<any>('bot', 'wallet_export');
  const events = await a.api.call<any>('bot', 'events', {});
  const merchant = async (username: string) => {
    const m = await fetch(`${world.url}/merchant`, { method: 'POST', body: JSON.stringify({ action: 'register', name: username, username, payout_address: external }) });
    return ((await m.json()) as any).data.api_key as string;
  };
  keys.merchantA = await merchant('matrix-shop-a');
  await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${keys.merchantA}` }, body: JSON.stringify({ action: 'set_webhook', url: `http://127.0.0.1:${receiver.port}/hook` }) });
  keys.merchantB = await merchant('matrix-shop-b');
  const merchantCall = async (action: string, params: Record<string, unknown>) =>
    ((await (await fetch(`${world.url}/merchant`, { method: 'POST', headers: { authorization: `Bearer ${keys.merchantA}` }, body: JSON.stringify({ action, ...params }) })).json()) as any).data;
  const merchantReq = await merchantCall('create_payment_request', { description: 'matrix', amount: 2 });
  const merchantEvents = await merchantCall('events', {});
  await a.api.call('bot', 'pay', { to: 'matrix-shop-a', amount: 0.5, reference: 'order-matrix' });
  const deliveries = (await world.services.db.get('SELECT delivery_id FROM webhook_deliveries LIMIT 1')) as { delivery_id: string } | null;
  keys.ownerA = (await ownerToken('a@example.com')).key;
  keys.ownerB = (await ownerToken('b@example.com')).key;
  keys.botA = a.profile.api_key;
  keys.botB = b.profile.api_key;
  keys.none = undefined;
  objects = {
    walletA: a.walletId,
    txA: tx.transaction_id,
    signingTxA: small.transaction_id,
    approvalA: tx.approval_id,
    withdrawalA: wd.withdrawal_id,
    withdrawalTxA: wd.transaction_id,
    requestA: req.request_id,
    exportA: exp.export_id,
    spareWalletA: spare.walletId,
    eventA: events.items[0].event_id,
    deliveryA: deliveries!.delivery_id,
    merchantRequestA: merchantReq.request_id,
    merchantEventA: merchantEvents.items[0].event_id,
    fundRequestA: fr.fund_request_id,
    enrollmentA: enrollment.enrollment_id,
    // Another token of owner A: revoking the one the matrix calls with would 401 every later owner row.
    tokenA: (await ownerToken('a@example.com')).tokenId,
    usernameB: b.username,
    external,
  };
});
afterAll(async () => {
  receiver.stop(true);
  await world.stop();
});

function kindOf(who: Who): AuthKind | 'none' {
  if (who === 'none') return 'none';
  return who.startsWith('bot') ? 'bot' : who.startsWith('merchant') ? 'merchant' : 'owner';
}

/** allow: authenticated and not refused access; unauthorized: 401; hidden: 404 (another tenant's object). */
function expected(auth: AuthKind, row: Row, who: Who): 'allow' | 'unauthorized' | 'hidden' {
  if (auth === 'none') return 'allow';
  if (kindOf(who) !== auth) return 'unauthorized';
  return row.ofA && who.endsWith('B') ? 'hidden' : 'allow';
}

test('every action has a row, and every principal gets exactly the access its row says', async () => {
  const app = createApp(world.services);
  const table = actionTable();
  const missing: string[] = [];
  const wrong: string[] = [];
  for (const [endpoint, actions] of Object.entries(table)) {
    for (const [name, entry] of actions) {
      const row = ROWS[`${endpoint}/${name}`];
      if (!row) {
        missing.push(`${endpoint}/${name}`);
        continue;
      }
      for (const who of WHO) {
        const key = keys[who];
        const res = await app.handle(
          new Request(`http://localhost/v1/${endpoint}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
            body: JSON.stringify({ action: name, ...row.params(objects) }),
          }),
        );
        const body = (await res.json()) as any;
        const code = body.success ? 'OK' : body.error.code;
        const want = expected(entry.contract.auth, row, who);
        const got = code === 'UNAUTHORIZED' ? 'unauthorized' : code === 'NOT_FOUND' && row.ofA ? 'hidden' : 'allow';
        // An allowed call may still be refused for business reasons, but never by identity.
        const ok = want === got && !(want === 'allow' && (code === 'WALLET_NOT_CLAIMED' || res.status === 403));
        if (!ok) wrong.push(`${endpoint}/${name} as ${who}: expected ${want}, got ${res.status} ${code}`);
      }
    }
  }
  expect(missing).toEqual([]);
  expect(wrong).toEqual([]);
}, 60_000);
