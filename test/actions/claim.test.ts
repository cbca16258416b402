import { describe, expect, test } from 'bun:test';
import { listMail, type MailLink } from '../../src/db/mail.ts';
import { getWallet } from '../../src/db/wallets.ts';
import { followLink } from '../helpers/links.ts';
import { call } from '../helpers/services.ts';
import { addWallet, botCall, ownerWorld, type OwnerWorld } from './fixtures.ts';

const MINUTE = 60_000;

const claim = (w: OwnerWorld, walletId: string, claim_code: string, email = 'owner@example.com') => call(w.app, '/v1/public', { action: 'claim', wallet_id: walletId, claim_code, email });

/** The newest mail's link with `label`, as a path of the app. */
async function lastLink(w: OwnerWorld, label: string): Promise<string> {
  const mail = (await listMail(w.services.db, 1))[0]!;
  const link = (JSON.parse(mail.links) as MailLink[]).find((l) => l.label === label)!;
  return new URL(link.url).pathname;
}

/** Opens the link and presses its button, as the owner does. */
const follow = (w: OwnerWorld, path: string) => followLink((r) => w.app.handle(r), `http://localhost${path}`);

describe('claim_info', () => {
  test('shows name, username and status, with the pledged e-mail masked (GET, no auth)', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services, { name: 'Helper Bot', ownerEmail: 'alice.smith@example.com' });
    const res = await call(w.app, `/v1/public?action=claim_info&wallet_id=${wallet.walletId}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ wallet_id: wallet.walletId, name: 'Helper Bot', username: wallet.username, status: 'unclaimed', owner_email_masked: 'al***@example.com' });
    expect(JSON.stringify(res.body)).not.toContain('alice.smith');
    expect(JSON.stringify(res.body)).not.toContain(wallet.code);
  });

  test('an unknown wallet is NOT_FOUND', async () => {
    const w = ownerWorld();
    const res = await call(w.app, '/v1/public?action=claim_info&wallet_id=wal_00000000000000000000000000');
    expect(res.status).toBe(404);
  });
});

describe('claim', () => {
  test('a right code mails a one-time link; following it claims the wallet, creates the owner, starts a session and emits wallet.claimed', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services, { name: 'Helper Bot' });
    const res = await claim(w, wallet.walletId, wallet.code.toLowerCase().replace('-', ' '), 'Owner@Example.com');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ wallet_id: wallet.walletId, email: 'owner@example.com', link_expires_at: new Date(w.clock.ms + 15 * MINUTE).toISOString() });
    const mail = await listMail(w.services.db, 10);
    expect(mail).toHaveLength(1);
    expect(mail[0]).toMatchObject({ kind: 'claim', to_addr: 'owner@example.com', status: 'queued' });
    expect((await getWallet(w.services.db, wallet.walletId))?.status).toBe('unclaimed');

    const landing = await follow(w, await lastLink(w, 'claim'));
    expect(landing.status).toBe(303);
    expect(landing.headers.get('location')).toBe(`/dashboard/wallets/${wallet.walletId}?done=claimed`);
    const cookie = landing.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^aw_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);

    const claimed = (await getWallet(w.services.db, wallet.walletId))!;
    expect(claimed.status).toBe('claimed');
    const owner = await w.services.db.get<{ owner_id: string; email: string }>('SELECT owner_id, email FROM owners');
    expect(owner?.email).toBe('owner@example.com');
    expect(claimed.owner_id).toBe(owner!.owner_id);
    const ev = await w.services.db.all<{ type: string; data: string }>("SELECT type, data FROM events WHERE wallet_id = ? AND type = 'wallet.claimed'", wallet.walletId);
    expect(ev).toHaveLength(1);
    expect(JSON.parse(ev[0]!.data)).toMatchObject({ owner_id: owner!.owner_id, owner_email: 'ow***@example.com' });

    // The session opens the dashboard; the agent's key now works beyond info.
    const dash = await w.app.handle(new Request(`http://localhost/dashboard/wallets/${wallet.walletId}`, { headers: { cookie: cookie.split(';')[0]! } }));
    expect(dash.status).toBe(200);
    expect((await botCall(w, wallet.apiKey, 'my_limits')).status).toBe(200);
  });

  test('the session cookie is Secure when the public URL is https', async () => {
    const w = ownerWorld({ env: { AGENT_WALLET_PUBLIC_URL: 'https://wallet.example.com' } });
    const wallet = await addWallet(w.services);
    await claim(w, wallet.walletId, wallet.code);
    const landing = await follow(w, await lastLink(w, 'claim'));
    expect(landing.headers.get('set-cookie')).toContain('; Secure');
    expect(JSON.parse((await listMail(w.services.db, 1))[0]!.links)[0].url).toStartWith('https://wallet.example.com/login/');
  });

  test('five wrong codes lock the claim for 15 minutes; after the lock the right code works', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services);
    for (let i = 1; i <= 4; i++) {
      const res = await claim(w, wallet.walletId, 'WRNG-CODE');
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', field: '/claim_code', attempts_left: 5 - i });
    }
    const fifth = await claim(w, wallet.walletId, 'WRNG-CODE');
    expect(fifth.status).toBe(429);
    expect(fifth.body.error.code).toBe('RATE_LIMITED');
    expect(fifth.headers.get('retry-after')).toBe('900');

    w.advance(14 * MINUTE);
    const locked = await claim(w, wallet.walletId, wallet.code);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('60');
    expect((await call(w.app, `/v1/public?action=claim_info&wallet_id=${wallet.walletId}`)).body.data.claim_locked_until).toBe(new Date(w.clock.ms + MINUTE).toISOString());
    expect(await listMail(w.services.db, 10)).toHaveLength(0);

    w.advance(MINUTE);
    const ok = await claim(w, wallet.walletId, wallet.code);
    expect(ok.status).toBe(200);
    expect(await listMail(w.services.db, 10)).toHaveLength(1);
  });

  test('a right code resets the count of wrong ones', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services);
    for (let i = 0; i < 4; i++) await claim(w, wallet.walletId, 'WRNG-CODE');
    expect((await claim(w, wallet.walletId, wallet.code)).status).toBe(200);
    expect((await claim(w, wallet.walletId, 'WRNG-CODE')).body.error.attempts_left).toBe(4);
  });

  test('a magic link works once', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services);
    await claim(w, wallet.walletId, wallet.code);
    const path = await lastLink(w, 'claim');
    expect((await follow(w, path)).status).toBe(303);
    const again = await follow(w, path);
    expect(again.status).toBe(410);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await again.text()).toContain('already used');
  });

  test('a magic link expires after 15 minutes and then changes nothing', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services);
    await claim(w, wallet.walletId, wallet.code);
    const path = await lastLink(w, 'claim');
    w.advance(15 * MINUTE);
    const res = await follow(w, path);
    expect(res.status).toBe(410);
    const page = await res.text();
    expect(page).toContain('expired');
    expect(page).toContain(`/claim/${wallet.walletId}`);
    expect((await getWallet(w.services.db, wallet.walletId))?.status).toBe('unclaimed');
    expect(await w.services.db.get('SELECT count(*) AS n FROM owners')).toEqual({ n: 0n });
  });

  test('an unknown or malformed link is a friendly 404', async () => {
    const w = ownerWorld();
    for (const token of ['x'.repeat(43), 'short', '..%2F..%2Fetc']) {
      const res = await follow(w, `/login/${token}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('What to do');
    }
  });

  test('claiming twice is refused: the action says INVALID_STATUS and an older link says already claimed', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services);
    await claim(w, wallet.walletId, wallet.code, 'first@example.com');
    const first = await lastLink(w, 'claim');
    await claim(w, wallet.walletId, wallet.code, 'second@example.com');
    const second = await lastLink(w, 'claim');
    expect((await follow(w, first)).status).toBe(303);
    const late = await follow(w, second);
    expect(late.status).toBe(410);
    expect(await late.text()).toContain('already claimed');
    const again = await claim(w, wallet.walletId, wallet.code, 'second@example.com');
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('INVALID_STATUS');
    const owner = await w.services.db.get<{ email: string }>('SELECT o.email FROM owners o JOIN wallets w ON w.owner_id = o.owner_id WHERE w.wallet_id = ?', wallet.walletId);
    expect(owner?.email).toBe('first@example.com');
  });

  test('a second wallet claimed with the same e-mail joins the same owner', async () => {
    const w = ownerWorld();
    const a = await addWallet(w.services);
    const b = await addWallet(w.services);
    for (const wallet of [a, b]) {
      await claim(w, wallet.walletId, wallet.code);
      await follow(w, await lastLink(w, 'claim'));
    }
    expect(await w.services.db.get('SELECT count(*) AS n FROM owners')).toEqual({ n: 1n });
    expect((await getWallet(w.services.db, a.walletId))?.owner_id).toBe((await getWallet(w.services.db, b.walletId))!.owner_id);
  });

  test('a bad e-mail is a VALIDATION_ERROR naming /email; an unknown wallet is NOT_FOUND', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services);
    const bad = await claim(w, wallet.walletId, wallet.code, 'not-an-email');
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('/email');
    expect((await claim(w, 'wal_00000000000000000000000000', wallet.code)).status).toBe(404);
  });
});
