/**
 * Mailed claim and sign-in links survive mail scanners, over real HTTP: opening a link (as a
 * scanner does, with no cookies, any number of times) shows one button and spends nothing; only
 * the button's POST, with the page's CSRF token and cookie, claims or signs in.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { listMail, type MailLink } from '../../src/db/mail.ts';
import { getWallet } from '../../src/db/wallets.ts';
import { addWallet, claimFor, fakeChain } from '../actions/fixtures.ts';
import { csrfOf, followLink } from '../helpers/links.ts';
import { startTestServer, testServices } from '../helpers/services.ts';

const services = testServices({ chain: fakeChain });
const server = await startTestServer(services);
const origin = server.url.replace(/\/v1$/, '');
afterAll(() => server.stop());

const count = async (table: string) => Number((await services.db.get<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`))!.n);

/** The newest mail to `to`, its first link as a URL of the test server. */
async function linkTo(to: string): Promise<string> {
  const mail = (await listMail(services.db, 50)).find((m) => m.to_addr === to)!;
  return new URL(new URL((JSON.parse(mail.links) as MailLink[])[0]!.url).pathname, origin).href;
}

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('a mailed claim link', () => {
  test('two GETs (a scanner, then the person) leave the wallet unclaimed and the link usable; the page’s POST claims it', async () => {
    const wallet = await addWallet(services, { name: 'Scanned Agent' });
    expect((await post('/v1/public', { action: 'claim', wallet_id: wallet.walletId, claim_code: wallet.code, email: 'scanned@example.com' })).status).toBe(200);
    const url = await linkTo('scanned@example.com');
    const owners = await count('owners');
    const sessions = await count('owner_sessions');

    for (let i = 0; i < 2; i++) {
      const page = await fetch(url, { redirect: 'manual' });
      expect(page.status).toBe(200);
      expect(page.headers.getSetCookie().some((c) => c.startsWith('aw_session='))).toBe(false);
      const text = await page.text();
      expect(text).toContain('<button type="submit">Claim “Scanned Agent”</button>');
      expect(text).toContain(`action="${new URL(url).pathname}"`);
      expect(text).toContain('sc***@example.com');
    }
    expect((await getWallet(services.db, wallet.walletId))?.status).toBe('unclaimed');
    expect((await services.db.get<{ used_at: bigint | null }>('SELECT used_at FROM magic_links ORDER BY created_at DESC LIMIT 1'))?.used_at).toBeNull();
    expect([await count('owners'), await count('owner_sessions')]).toEqual([owners, sessions]);

    const landing = await followLink(fetch, url);
    expect(landing.status).toBe(303);
    expect(landing.headers.get('location')).toBe(`/dashboard/wallets/${wallet.walletId}?done=claimed`);
    expect(landing.headers.get('set-cookie')).toMatch(/^aw_session=[A-Za-z0-9_-]{43};/);
    expect((await getWallet(services.db, wallet.walletId))?.status).toBe('claimed');

    const spent = await fetch(url, { redirect: 'manual' });
    expect(spent.status).toBe(410);
    expect(await spent.text()).toContain('already used');
  });

  test('the POST without the page’s CSRF token, or with a forged one, is refused and spends nothing', async () => {
    const wallet = await addWallet(services, { name: 'Forged Agent' });
    await post('/v1/public', { action: 'claim', wallet_id: wallet.walletId, claim_code: wallet.code, email: 'forged@example.com' });
    const url = await linkTo('forged@example.com');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const bare = await fetch(url, { method: 'POST', redirect: 'manual', headers: form, body: '' });
    expect(bare.status).toBe(403);
    const token = 'A'.repeat(43);
    const forged = await fetch(url, { method: 'POST', redirect: 'manual', headers: { ...form, cookie: `aw_csrf=${'B'.repeat(43)}` }, body: `csrf=${token}` });
    expect(forged.status).toBe(403);
    expect((await getWallet(services.db, wallet.walletId))?.status).toBe('unclaimed');
    expect((await followLink(fetch, url)).status).toBe(303);
  });

  test('a HEAD of the link spends nothing either', async () => {
    const wallet = await addWallet(services, { name: 'Headed Agent' });
    await post('/v1/public', { action: 'claim', wallet_id: wallet.walletId, claim_code: wallet.code, email: 'headed@example.com' });
    const url = await linkTo('headed@example.com');
    await fetch(url, { method: 'HEAD', redirect: 'manual' });
    expect((await getWallet(services.db, wallet.walletId))?.status).toBe('unclaimed');
    expect((await followLink(fetch, url)).status).toBe(303);
  });
});

describe('a mailed sign-in link', () => {
  test('opening it twice starts no session; the page’s POST signs in', async () => {
    const wallet = await addWallet(services, { name: 'Owned Agent' });
    await claimFor(services, wallet.walletId, 'signin@example.com');
    const login = await fetch(`${origin}/login`);
    const csrfCookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    const asked = await fetch(`${origin}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie },
      body: new URLSearchParams({ csrf: csrfOf(await login.text()), email: 'signin@example.com' }).toString(),
    });
    expect(asked.status).toBe(200);
    const url = await linkTo('signin@example.com');
    const sessions = await count('owner_sessions');
    for (let i = 0; i < 2; i++) {
      const page = await fetch(url, { redirect: 'manual' });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<button type="submit">Sign in</button>');
    }
    expect(await count('owner_sessions')).toBe(sessions);
    const landing = await followLink(fetch, url);
    expect(landing.status).toBe(303);
    expect(landing.headers.get('location')).toBe('/dashboard');
    expect(await count('owner_sessions')).toBe(sessions + 1);
    const dashboard = await fetch(`${origin}/dashboard`, { headers: { cookie: landing.headers.get('set-cookie')!.split(';')[0]! }, redirect: 'manual' });
    expect(dashboard.status).toBe(200);
  });
});
