/**
 * A mail sent once per dedupe key: the `notifications` row, written after SMTP accepted the mail, is
 * the record, and a key that has one sends nothing. A crash between the mail and the row mails again
 * on the retry (SMTP offers nothing to make that exactly once). The lookup and the row are one named
 * prepared statement each on the pool: neither needs the ORM's unit of work.
 */
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import type { Mailer } from '@emporia/api/src/kit/mail.ts';
import type { NotificationInput } from '@emporia/workflows/contracts';

export interface MailOnceResult {
  messageId: string | null;
  /** A mail with this key had been sent already: nothing was sent now. */
  skipped: boolean;
}

async function pool(orm: MikroORM): Promise<Pool> {
  return (orm.em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
}

/**
 * Mails `input` unless a mail with its dedupe key was sent. `unsent: true` says the caller knows none
 * was (the receipt of an order its own transaction just created): the lookup is left out.
 */
export async function mailOnce(orm: MikroORM, mailer: Mailer, input: NotificationInput, opts: { unsent?: boolean } = {}): Promise<MailOnceResult> {
  const db = await pool(orm);
  if (!opts.unsent) {
    const { rows } = await db.query<{ message_id: string | null }>({
      name: 'mail_once_lookup',
      text: 'select message_id from notifications where dedupe_key = $1 limit 1',
      values: [input.dedupeKey],
    });
    if (rows[0]) return { messageId: rows[0].message_id ?? null, skipped: true };
  }
  const { messageId } = await mailer.send({ to: input.recipient, subject: input.subject, text: input.text });
  const now = new Date();
  // One INSERT, no transaction around it (a retry after a crash here mails again, as before).
  await db.query({
    name: 'mail_once_record',
    text: `insert into notifications (id, created_at, modified_at, organization_id, kind, dedupe_key, recipient, subject, message_id, sent_at)
           values ($1, $2, null, $3, $4, $5, $6, $7, $8, $2)`,
    values: [randomUUID(), now, input.organizationId, input.kind, input.dedupeKey, input.recipient, input.subject, messageId],
  });
  return { messageId, skipped: false };
}
