/** Queues mail into the outbox; the mail job (src/mail/sender.ts) delivers it. */
import { newId } from '../contract/ids.ts';
import { insertMail, type MailLink } from '../db/mail.ts';
import type { Services } from '../services.ts';

export interface OutgoingMail {
  /** What the mail is about: claim, login, approval. */
  kind: string;
  to: string;
  subject: string;
  /** Plain text; the links appear in it as well. */
  body: string;
  links: MailLink[];
}

/**
 * Queues `mail`; call it inside the write transaction that causes the mail
 * (then a rolled-back change sends nothing). Returns the mail id.
 */
export async function queueMail(services: Services, mail: OutgoingMail): Promise<string> {
  const mailId = newId('mail');
  await insertMail(services.db, { mail_id: mailId, kind: mail.kind, to: mail.to, subject: mail.subject, body: mail.body, links: mail.links, now: services.now().getTime() });
  return mailId;
}
