/**
 * The owner's transaction export (issue 30, item 2): a wallet's transactions as CSV for a period,
 * streamed, with exact amounts, escaped cells and spreadsheet formulas defused; the dashboard links
 * both exports and the receipt of a completed transaction under the owner's session; another
 * owner gets nothing. (10,000 rows in bounded memory and the time: `npm run bench`.)
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { confirmSignSubmit } from '../../src/client/sign.ts';
import { findOwnerByEmail, insertSession } from '../../src/db/owners.ts';
import { csvCell } from '../../src/evidence/csv-export.ts';
import { newToken } from '../../src/mail/links.ts';
import { SESSION_COOKIE } from '../../src/web/session.ts';
import { startWorld, type Agent, type World } from '../helpers/world.ts';

let world: World;
let alice: Agent;
let bob: Agent;
let txIds: string[];
const OWNER = 'owner@example.com';

beforeAll(async () => {
  world = await startWorld();
  ({ alice, bob } = await world.payerAndPayee(1_000_000n));
  txIds = [];
  for (const [amount, note] of [
    [0.1, 'coffee, "large"'],
    [0.25, '=HYPERLINK("http://evil.example")'],
  ] as const) {
    const intent = await alice.api.call<{ transaction_id: string }>('bot', 'pay', { to: bob.username, amount, note });
    expect((await confirmSignSubmit(alice.api, alice.profile, intent.transaction_id)).status).toBe('completed');
    txIds.push(intent.transaction_id);
  }
});
afterAll(async () => {
  await world?.stop();
});

const csv = async (query: string, token?: string) => fetch(`${world.url}/owner/transactions.csv?${query}`, { headers: { authorization: `Bearer ${token ?? (await world.ownerToken(OWNER))}` } });

test('the CSV holds every transaction with exact amounts, quoted cells and formulas defused; the period filters', async () => {
  const res = await csv(`wallet_id=${alice.profile.wallet_id}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/csv');
  const lines = (await res.text()).trimEnd().split('\r\n');
  expect(lines[0]).toBe('date,type,direction,counterparty,amount,fee,status,signature,memo,reference,transaction_id');
  const mine = lines.filter((l) => txIds.some((id) => l.endsWith(id)));
  expect(mine).toHaveLength(2);
  expect(mine[0]).toContain(`,payment,out,${bob.username},0.1,`);
  expect(mine[0]).toContain(',completed,');
  expect(mine[0]).toContain(',"coffee, ""large""",');
  expect(mine[1]).toContain(`,"'=HYPERLINK(""http://evil.example"")",`);
  const future = await csv(`wallet_id=${alice.profile.wallet_id}&from=2999-01-01T00:00:00Z`);
  expect((await future.text()).trimEnd().split('\r\n')).toHaveLength(1);
  expect((await csv(`wallet_id=${alice.profile.wallet_id}&from=yesterday`)).status).toBe(400);
});

test("another owner's token gets nothing", async () => {
  expect((await csv(`wallet_id=${alice.profile.wallet_id}`, await world.ownerToken('stranger@example.com'))).status).toBe(404);
  expect((await fetch(`${world.url}/owner/transactions.csv?wallet_id=${alice.profile.wallet_id}`)).status).toBe(401);
});

test('csvCell quotes what needs quoting and defuses formula starts', () => {
  expect(csvCell(null)).toBe('');
  expect(csvCell('plain')).toBe('plain');
  expect(csvCell('a,b')).toBe('"a,b"');
  expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
  for (const start of ['=', '+', '-', '@', '\t']) expect(csvCell(`${start}1+1`).startsWith(`'${start}`) || csvCell(`${start}1+1`).startsWith(`"'${start}`)).toBe(true);
});

test("the dashboard, under the owner's session, serves both exports and a completed transaction's receipt", async () => {
  const origin = new URL(world.url).origin;
  const cookie = await sessionCookie();
  const page = await (await fetch(`${origin}/dashboard/wallets/${alice.profile.wallet_id}`, { headers: { cookie } })).text();
  expect(page).toContain(`/dashboard/wallets/${alice.profile.wallet_id}/transactions.csv`);
  expect(page).toContain(`/dashboard/wallets/${alice.profile.wallet_id}/decision-log.jsonl`);
  const file = await fetch(`${origin}/dashboard/wallets/${alice.profile.wallet_id}/transactions.csv`, { headers: { cookie } });
  expect(file.status).toBe(200);
  expect((await file.text()).split('\r\n').filter((l) => txIds.some((id) => l.endsWith(id)))).toHaveLength(2);
  const log = await fetch(`${origin}/dashboard/wallets/${alice.profile.wallet_id}/decision-log.jsonl`, { headers: { cookie } });
  expect(JSON.parse((await log.text()).split('\n')[0]!)).toMatchObject({ type: 'export', wallet_id: alice.profile.wallet_id });
  const detail = await (await fetch(`${origin}/dashboard/transactions/${txIds[0]}`, { headers: { cookie } })).text();
  expect(detail).toContain(`/dashboard/transactions/${txIds[0]}/receipt.jws`);
  const jws = (await (await fetch(`${origin}/dashboard/transactions/${txIds[0]}/receipt.jws`, { headers: { cookie } })).text()).trim();
  const jwks = createLocalJWKSet((await (await fetch(`${origin}/.well-known/agent-wallet/log-key`)).json()) as JSONWebKeySet);
  expect(JSON.parse(new TextDecoder().decode((await compactVerify(jws, jwks)).payload))).toMatchObject({ sub: txIds[0], amount: '0.1' });
  // Without a session: to the sign-in page, nothing exported.
  const anonymous = await fetch(`${origin}/dashboard/wallets/${alice.profile.wallet_id}/transactions.csv`, { redirect: 'manual' });
  expect(anonymous.status).toBe(303);
});

/** An owner session cookie, stored as the sign-in link stores one (its hash). */
async function sessionCookie(): Promise<string> {
  const { token, hash } = newToken();
  const owner = (await findOwnerByEmail(world.services.db, OWNER))!;
  await world.services.db.transaction(async () => await insertSession(world.services.db, { session_hash: hash, owner_id: owner.owner_id, now: Date.now(), expires_at: Date.now() + 3_600_000 }));
  return `${SESSION_COOKIE}=${token}`;
}
