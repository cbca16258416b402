/** The mail outbox (DESIGN §7): mail is written in the transaction that causes it and delivered by the mail job. */
import type { Store } from './store.ts';

/** Breaks ties of created_at: SQLite's rowid is insertion order; PostgreSQL has no rowid, so ties order by the primary key there. */
const TIE = { sqlite: 'rowid', postgres: 'mail_id' } as const;

/** A link carried by a mail, listed by `agent-wallet admin mail`. */
export interface MailLink {
  label: string;
  url: string;
}

export interface MailRow {
  mail_id: string;
  kind: string;
  to_addr: string;
  subject: string;
  body: string;
  links: string;
  status: 'queued' | 'sent' | 'failed';
  channel: 'smtp' | 'log' | null;
  attempts: bigint;
  next_attempt_at: bigint;
  last_error: string | null;
  created_at: bigint;
  sent_at: bigint | null;
}

/** Queues a mail for the next run of the mail job. Call inside a write transaction. */
export async function insertMail(db: Store, m: { mail_id: string; kind: string; to: string; subject: string; body: string; links: MailLink[]; now: number }): Promise<void> {
  await db.run("INSERT INTO mail_outbox (mail_id, kind, to_addr, subject, body, links, status, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)", m.mail_id, m.kind, m.to, m.subject, m.body, JSON.stringify(m.links), m.now, m.now);
}

/** Queued mail whose next attempt is due, oldest first. */
export async function dueMail(db: Store, now: number, limit: number): Promise<MailRow[]> {
  return await db
    .all<MailRow>("SELECT * FROM mail_outbox WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, created_at LIMIT ?", now, limit);
}

/**
 * Claims a due mail for one delivery attempt by pushing its next attempt to `leaseUntil` (so a
 * crash mid-send retries after the lease, and two runners never send the same mail at once).
 * False when another runner claimed it first.
 */
export async function leaseMail(db: Store, mailId: string, now: number, leaseUntil: number): Promise<boolean> {
  return (
    (await db.run("UPDATE mail_outbox SET next_attempt_at = ?, attempts = attempts + 1 WHERE mail_id = ? AND status = 'queued' AND next_attempt_at <= ?", leaseUntil, mailId, now))
      .changes === 1
  );
}

/** Records a delivery. `wipe` replaces body and links (SMTP deliveries: the links are one-time secrets). */
export async function markMailSent(db: Store, mailId: string, channel: 'smtp' | 'log', now: number, wipe: boolean): Promise<void> {
  if (wipe) {
    await db.run("UPDATE mail_outbox SET status = 'sent', channel = ?, sent_at = ?, last_error = NULL, body = '(delivered over SMTP; removed because it held one-time links)', links = '[]' WHERE mail_id = ?", channel, now, mailId);
  } else {
    await db.run("UPDATE mail_outbox SET status = 'sent', channel = ?, sent_at = ?, last_error = NULL WHERE mail_id = ?", channel, now, mailId);
  }
}

/** Records a failed attempt: retried at `nextAt`, or given up on (`nextAt` null). */
export async function markMailAttemptFailed(db: Store, mailId: string, error: string, nextAt: number | null): Promise<void> {
  if (nextAt === null) await db.run("UPDATE mail_outbox SET status = 'failed', last_error = ? WHERE mail_id = ?", error, mailId);
  else await db.run('UPDATE mail_outbox SET next_attempt_at = ?, last_error = ? WHERE mail_id = ?', nextAt, error, mailId);
}

export async function getMail(db: Store, mailId: string): Promise<MailRow | null> {
  return await db.get<MailRow>('SELECT * FROM mail_outbox WHERE mail_id = ?', mailId);
}

/** The outbox, newest first. */
export async function listMail(db: Store, limit: number): Promise<MailRow[]> {
  return await db.all<MailRow>(`SELECT * FROM mail_outbox ORDER BY created_at DESC, ${TIE[db.dialect]} DESC LIMIT ?`, limit);
}

/** Deletes delivered or given-up mail older than `before` (outbox retention). */
export async function deleteOldMail(db: Store, before: number): Promise<number> {
  return (await db.run("DELETE FROM mail_outbox WHERE status IN ('sent', 'failed') AND created_at < ?", before)).changes;
}
