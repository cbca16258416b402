/**
 * Mail delivery (DESIGN §7). The mail job takes due rows from the outbox and hands them to the
 * transport: SMTP through nodemailer when `mail.smtp_url` is set, else the log (one line per mail
 * with its links; the row stays in the outbox for `agent-wallet admin mail`). A failed SMTP
 * attempt is retried with growing delays for about a day, then the mail is marked failed.
 */
import nodemailer from 'nodemailer';
import { deleteOldMail, dueMail, leaseMail, markMailAttemptFailed, markMailSent, type MailLink, type MailRow } from '../db/mail.ts';
import { deleteExpiredOwnerRows } from '../db/owners.ts';
import type { JobDef } from '../jobs/runner.ts';
import type { Logger } from '../log.ts';
import type { Services } from '../services.ts';

/** Waits after the 1st, 2nd, … failed attempt; after the last one the mail is given up. */
export const RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 1_800_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000];
/** How long one attempt owns a row; a crash mid-send retries after it. */
export const LEASE_MS = 2 * 60_000;
/** Mails per job run. */
const BATCH = 20;

/** Where mail goes. */
export interface MailTransport {
  readonly channel: 'smtp' | 'log';
  send(mail: MailRow): Promise<void>;
  close(): void;
}

/** SMTP via nodemailer; `url` as nodemailer takes it (smtp://user:pass@host:587, smtps://…). */
export function smtpTransport(url: string, from: string): MailTransport {
  const transporter = nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 }, { from });
  return {
    channel: 'smtp',
    send: async (mail) => {
      await transporter.sendMail({ to: mail.to_addr, subject: mail.subject, text: mail.body });
    },
    close: () => transporter.close(),
  };
}

/** The outbox-only transport: prints each mail with its links to the log. */
export function logTransport(log: Logger): MailTransport {
  return {
    channel: 'log',
    send: async (mail) => {
      const links = (JSON.parse(mail.links) as MailLink[]).map((l) => `${l.label}: ${l.url}`);
      log.info('mail kept in the outbox (no mail.smtp_url set); list it with "agent-wallet admin mail"', { mail_id: mail.mail_id, to: mail.to_addr, subject: mail.subject, links });
    },
    close: () => {},
  };
}

/** The transport the config asks for. */
export function transportFor(services: Services): MailTransport {
  const { smtp_url, from } = services.config.mail;
  return smtp_url ? smtpTransport(smtp_url, from) : logTransport(services.log);
}

export interface DeliveryReport {
  sent: number;
  retrying: number;
  failed: number;
}

/**
 * Delivers every due mail once: claims each row (a lease, written before the first await), sends,
 * then records the outcome. Never throws for a mail that fails; the report counts outcomes.
 */
export async function deliverDueMail(services: Services, transport: MailTransport): Promise<DeliveryReport> {
  const { db } = services;
  const report: DeliveryReport = { sent: 0, retrying: 0, failed: 0 };
  for (const mail of (await dueMail(db, services.now().getTime(), BATCH))) {
    const started = services.now().getTime();
    const leased = await db.transaction(async () => await leaseMail(db, mail.mail_id, started, started + LEASE_MS));
    if (!leased) continue;
    const attempt = Number(mail.attempts) + 1;
    try {
      // An approval or sign-in link in a mail must point at rows that survive a power loss.
      await services.durable();
      await transport.send(mail);
      await db.transaction(async () => await markMailSent(db, mail.mail_id, transport.channel, services.now().getTime(), transport.channel === 'smtp'));
      report.sent++;
    } catch (err) {
      const message = ((err as Error)?.message ?? String(err)).slice(0, 500);
      const delay = RETRY_DELAYS_MS[attempt - 1];
      const nextAt = delay === undefined ? null : services.now().getTime() + delay;
      await db.transaction(async () => await markMailAttemptFailed(db, mail.mail_id, message, nextAt));
      if (nextAt === null) report.failed++;
      else report.retrying++;
      services.log.warn(nextAt === null ? 'mail failed for good' : 'mail attempt failed; will retry', {
        mail_id: mail.mail_id,
        attempt,
        error: message,
        next_attempt_at: nextAt === null ? null : new Date(nextAt).toISOString(),
      });
    }
  }
  return report;
}

/** How long delivered mail stays in the outbox. */
export const MAIL_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const HOUSEKEEPING_EVERY_MS = 60 * 60 * 1000;

/**
 * Hourly owner-side housekeeping: expired sessions and magic links, and outbox rows past their
 * retention. Runs on the mail job's tick rather than as a job of its own.
 */
export async function ownerHousekeeping(services: Services): Promise<number> {
  const now = services.now().getTime();
  return await services.db.transaction(async () => (await deleteExpiredOwnerRows(services.db, now)) + (await deleteOldMail(services.db, now - MAIL_RETENTION_MS)));
}

/** The mail job: every second, deliver what is due (restart-safe: the outbox is the queue). */
export function mailJob(services: Services, transport: MailTransport = transportFor(services)): JobDef {
  let lastHousekeeping = Number.NEGATIVE_INFINITY;
  return {
    name: 'mail',
    schedule: { everySeconds: 1 },
    runAtStart: true,
    run: async () => {
      await deliverDueMail(services, transport);
      const now = services.now().getTime();
      if (now - lastHousekeeping >= HOUSEKEEPING_EVERY_MS) {
        lastHousekeeping = now;
        await ownerHousekeeping(services);
      }
    },
  };
}
