import { afterEach, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { startClaim } from '../../src/actions/claim.ts';
import { getMail, listMail } from '../../src/db/mail.ts';
import { openDatabase } from '../../src/db/open.ts';
import { deliverDueMail, MAIL_RETENTION_MS, ownerHousekeeping, RETRY_DELAYS_MS, transportFor } from '../../src/mail/sender.ts';
import { queueMail } from '../../src/mail/outbox.ts';
import { addWallet, ownerCall, ownerWorld } from '../actions/fixtures.ts';
import { createApp } from '../../src/api/app.ts';
import { runCli } from '../helpers/daemon.ts';
import { followLink } from '../helpers/links.ts';
import { memoryLogger, tempDir, testServices } from '../helpers/services.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP peer on 127.0.0.1, port 0. `failures` RCPT commands are refused with 451 first. */
async function smtpPeer(opts: { failures?: number } = {}) {
  const received: Received[] = [];
  let failuresLeft = opts.failures ?? 0;
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      if (failuresLeft > 0) {
        failuresLeft--;
        const err = new Error('mailbox busy, try later') as Error & { responseCode: number };
        err.responseCode = 451;
        return callback(err);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { url: `smtp://127.0.0.1:${port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const peers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

describe('mail over SMTP', () => {
  test('the job delivers the claim mail to a real SMTP peer; the outbox row is marked sent and its secrets wiped', async () => {
    const peer = await smtpPeer();
    peers.push(peer);
    const w = ownerWorld({ env: { AGENT_WALLET_MAIL_SMTP_URL: peer.url, AGENT_WALLET_MAIL_FROM: 'Wallet <wallet@test.example>' } });
    const wallet = await addWallet(w.services, { name: 'Smtp Agent' });
    await startClaim(w.services, wallet.walletId, wallet.code, 'owner@example.com');
    const queued = (await listMail(w.services.db, 1))[0]!;
    const link = JSON.parse(queued.links)[0].url as string;

    const report = await deliverDueMail(w.services, transportFor(w.services));
    expect(report).toEqual({ sent: 1, retrying: 0, failed: 0 });
    expect(peer.received).toHaveLength(1);
    expect(peer.received[0]!.to).toEqual(['owner@example.com']);
    expect(peer.received[0]!.from).toBe('wallet@test.example');
    expect(peer.received[0]!.raw).toContain('Subject: =?UTF-8?Q?Confirm_that_you_own_the_agent_wallet_?=');
    // Quoted-printable may wrap long lines with "=\r\n": unwrap before looking for the link.
    expect(peer.received[0]!.raw.replace(/=\r\n/g, '')).toContain(link);

    const row = (await getMail(w.services.db, queued.mail_id))!;
    expect(row).toMatchObject({ status: 'sent', channel: 'smtp', attempts: 1n, links: '[]' });
    expect(row.body).not.toContain(link);
    expect((await deliverDueMail(w.services, transportFor(w.services))).sent).toBe(0);
  });

  test('a failing SMTP peer is retried after the backoff and the mail then arrives', async () => {
    const peer = await smtpPeer({ failures: 1 });
    peers.push(peer);
    const { log, lines } = memoryLogger();
    const clock = { ms: Date.parse('2030-01-01T00:00:00Z') };
    const services = testServices({ log, now: () => new Date(clock.ms), env: { AGENT_WALLET_MAIL_SMTP_URL: peer.url } });
    const id = await services.db.transaction(async () => await queueMail(services, { kind: 'test', to: 'x@example.com', subject: 'Hello', body: 'hi', links: [] }));
    const transport = transportFor(services);

    expect(await deliverDueMail(services, transport)).toEqual({ sent: 0, retrying: 1, failed: 0 });
    const failed = (await getMail(services.db, id))!;
    expect(failed).toMatchObject({ status: 'queued', attempts: 1n, next_attempt_at: BigInt(clock.ms + RETRY_DELAYS_MS[0]!) });
    expect(failed.last_error).toContain('451');
    expect(lines.some((l) => l.includes('mail attempt failed; will retry'))).toBe(true);

    clock.ms += RETRY_DELAYS_MS[0]! - 1;
    expect(await deliverDueMail(services, transport)).toEqual({ sent: 0, retrying: 0, failed: 0 });
    clock.ms += 1;
    expect(await deliverDueMail(services, transport)).toEqual({ sent: 1, retrying: 0, failed: 0 });
    expect(peer.received).toHaveLength(1);
    expect(await getMail(services.db, id)).toMatchObject({ status: 'sent', attempts: 2n, last_error: null });
  });

  test('a mail that keeps failing is given up after the last retry', async () => {
    const peer = await smtpPeer({ failures: 1_000 });
    peers.push(peer);
    const clock = { ms: Date.parse('2030-01-01T00:00:00Z') };
    const services = testServices({ now: () => new Date(clock.ms), env: { AGENT_WALLET_MAIL_SMTP_URL: peer.url } });
    const id = await services.db.transaction(async () => await queueMail(services, { kind: 'test', to: 'x@example.com', subject: 'Hello', body: 'hi', links: [] }));
    const transport = transportFor(services);
    for (const delay of RETRY_DELAYS_MS) {
      expect((await deliverDueMail(services, transport)).retrying).toBe(1);
      clock.ms += delay;
    }
    expect((await deliverDueMail(services, transport)).failed).toBe(1);
    expect(await getMail(services.db, id)).toMatchObject({ status: 'failed', attempts: BigInt(RETRY_DELAYS_MS.length + 1) });
  });
});

describe('mail without SMTP', () => {
  test('the mail stays in the outbox, is logged with its links, and admin mail --json lists it', async () => {
    const dataDir = join(tempDir('aw-mail-'), 'data');
    const { log, lines } = memoryLogger();
    const base = testServices({ log, env: { AGENT_WALLET_DATA_DIR: dataDir } });
    const db = openDatabase(join(dataDir, 'wallet.db'), { network: 'simnet' });
    const services = { ...base, db };
    const wallet = await addWallet(services, { name: 'Outbox Agent' });
    await startClaim(services, wallet.walletId, wallet.code, 'owner@example.com');
    const link = JSON.parse((await listMail(db, 1))[0]!.links)[0].url as string;

    expect(await deliverDueMail(services, transportFor(services))).toEqual({ sent: 1, retrying: 0, failed: 0 });
    const logged = lines.find((l) => l.includes('mail kept in the outbox'));
    expect(logged).toContain(link);
    expect((await listMail(db, 1))[0]).toMatchObject({ status: 'sent', channel: 'log' });
    db.close();

    const res = await runCli(['admin', 'mail', '--json', '--data-dir', dataDir]);
    expect(res.code).toBe(0);
    expect(res.json.total).toBe(1);
    expect(res.json.items[0]).toMatchObject({ to: 'owner@example.com', kind: 'claim', status: 'sent', channel: 'log', links: [{ label: 'claim', url: link }] });
    expect(res.json.items[0].subject).toContain('Outbox Agent');
    expect(res.json.items[0].text).toContain(link);
  });

  test('admin owner-token creates the owner and a token that works on /v1/owner', async () => {
    const dataDir = join(tempDir('aw-admin-'), 'data');
    openDatabase(join(dataDir, 'wallet.db'), { network: 'simnet' }).close();
    const res = await runCli(['admin', 'owner-token', 'Ops@Example.com', '--json', '--data-dir', dataDir]);
    expect(res.code).toBe(0);
    const token = res.json.token as string;
    expect(token).toStartWith('wallet_owner_');
    expect(res.json).toMatchObject({ email: 'ops@example.com', owner_created: true });
    const services = { ...testServices(), db: openDatabase(join(dataDir, 'wallet.db'), { network: 'simnet' }) };
    const w = { services, app: createApp(services), clock: { ms: 0 }, advance: () => {} };
    const wallets = await ownerCall(w, token, 'wallets');
    expect(wallets.body).toMatchObject({ success: true, data: { items: [], total: 0 } });
    services.db.close();
  });

  test('admin commands without a ledger fail with a message naming --data-dir', async () => {
    const res = await runCli(['admin', 'mail', '--data-dir', join(tempDir('aw-empty-'), 'nothing')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('--data-dir');
    const usage = await runCli(['admin', 'frobnicate']);
    expect(usage.code).toBe(2);
  });
});

describe('housekeeping', () => {
  test('drops expired sessions and magic links and delivered mail past its retention, keeps the rest', async () => {
    const w = ownerWorld();
    const wallet = await addWallet(w.services);
    await startClaim(w.services, wallet.walletId, wallet.code, 'owner@example.com');
    await deliverDueMail(w.services, transportFor(w.services));
    const link = new URL(JSON.parse((await listMail(w.services.db, 1))[0]!.links)[0].url).pathname;
    expect((await followLink((r) => w.app.handle(r), `http://localhost${link}`)).status).toBe(303);
    const count = async (table: string) => Number(((await w.services.db.get(`SELECT count(*) AS n FROM ${table}`)) as { n: bigint }).n);
    const tables = ['owner_sessions', 'magic_links', 'mail_outbox'];
    expect(await ownerHousekeeping(w.services)).toBe(0);
    expect(await Promise.all(tables.map(count))).toEqual([1, 1, 1]);
    w.advance(MAIL_RETENTION_MS + 1);
    expect(await ownerHousekeeping(w.services)).toBe(3);
    expect(await Promise.all(tables.map(count))).toEqual([0, 0, 0]);
  });
});
