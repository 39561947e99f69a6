/** The notification activities every workflow that mails uses (workers/src/activities/notifications.activities.ts). */
export interface NotificationInput {
  dedupeKey: string;
  organizationId: string | null;
  kind: string;
  recipient: string;
  subject: string;
  text: string;
}

export interface ProductAnnouncement {
  organizationId: string;
  recipients: string[];
  subject: string;
  text: string;
}

export interface NotificationActivities {
  /** What to announce about a new product, to whom; null when the product is gone. */
  productAnnouncement(productId: string): Promise<ProductAnnouncement | null>;
  /** Idempotent by dedupeKey: a retried activity whose row exists sends nothing twice. */
  sendNotification(input: NotificationInput): Promise<{ messageId: string | null; skipped: boolean }>;
}
