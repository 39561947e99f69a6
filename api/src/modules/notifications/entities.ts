/** A log of notifications mailed to people, written by workflows after the mail was accepted by SMTP. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';

export const Notification = defineEntity({
  name: 'Notification',
  tableName: 'notifications',
  properties: {
    ...baseProperties,
    organizationId: p.uuid().nullable().index(),
    kind: p.string(),
    /** Business key that makes the write idempotent (e.g. the workflow id). */
    dedupeKey: p.string().unique(),
    recipient: p.string(),
    subject: p.string(),
    messageId: p.string().nullable(),
    sentAt: p.datetime(),
  },
});
export type Notification = InferEntity<typeof Notification>;
