/** The mail outbox (DESIGN §7): mail is written in the transaction that causes it and delivered by the mail job. */
import type { Database } from 'bun:sqlite';

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
export function insertMail(db: Database, m: { mail_id: string; kind: string; to: string; subject: string; body: string; links: MailLink[]; now: number }): void {
  db.query(
    "INSERT INTO mail_outbox (mail_id, kind, to_addr, subject, body, links, status, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
  ).run(m.mail_id, m.kind, m.to, m.subject, m.body, JSON.stringify(m.links), m.now, m.now);
}

/** Queued mail whose next attempt is due, oldest first. */
export function dueMail(db: Database, now: number, limit: number): MailRow[] {
  return db
    .query<MailRow, [number, number]>("SELECT * FROM mail_outbox WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, created_at LIMIT ?")
    .all(now, limit);
}

/**
 * Claims a due mail for one delivery attempt by pushing its next attempt to `leaseUntil` (so a
 * crash mid-send retries after the lease, and two runners never send the same mail at once).
 * False when another runner claimed it first.
 */
export function leaseMail(db: Database, mailId: string, now: number, leaseUntil: number): boolean {
  return (
    db.query("UPDATE mail_outbox SET next_attempt_at = ?, attempts = attempts + 1 WHERE mail_id = ? AND status = 'queued' AND next_attempt_at <= ?").run(leaseUntil, mailId, now)
      .changes === 1
  );
}

/** Records a delivery. `wipe` replaces body and links (SMTP deliveries: the links are one-time secrets). */
export function markMailSent(db: Database, mailId: string, channel: 'smtp' | 'log', now: number, wipe: boolean): void {
  if (wipe) {
    db.query(
      "UPDATE mail_outbox SET status = 'sent', channel = ?, sent_at = ?, last_error = NULL, body = '(delivered over SMTP; removed because it held one-time links)', links = '[]' WHERE mail_id = ?",
    ).run(channel, now, mailId);
  } else {
    db.query("UPDATE mail_outbox SET status = 'sent', channel = ?, sent_at = ?, last_error = NULL WHERE mail_id = ?").run(channel, now, mailId);
  }
}

/** Records a failed attempt: retried at `nextAt`, or given up on (`nextAt` null). */
export function markMailAttemptFailed(db: Database, mailId: string, error: string, nextAt: number | null): void {
  if (nextAt === null) db.query("UPDATE mail_outbox SET status = 'failed', last_error = ? WHERE mail_id = ?").run(error, mailId);
  else db.query('UPDATE mail_outbox SET next_attempt_at = ?, last_error = ? WHERE mail_id = ?').run(nextAt, error, mailId);
}

export function getMail(db: Database, mailId: string): MailRow | null {
  return db.query<MailRow, [string]>('SELECT * FROM mail_outbox WHERE mail_id = ?').get(mailId);
}

/** The outbox, newest first. */
export function listMail(db: Database, limit: number): MailRow[] {
  return db.query<MailRow, [number]>('SELECT * FROM mail_outbox ORDER BY created_at DESC, rowid DESC LIMIT ?').all(limit);
}

/** Deletes delivered or given-up mail older than `before` (outbox retention). */
export function deleteOldMail(db: Database, before: number): number {
  return db.query("DELETE FROM mail_outbox WHERE status IN ('sent', 'failed') AND created_at < ?").run(before).changes;
}
