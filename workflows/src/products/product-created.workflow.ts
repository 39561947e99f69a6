/**
 * product-created:<product_id> — tells the organization's members that a product was published:
 * one mail per member through SMTP, each recorded as a notification row. The template every later
 * workflow copies: deterministic orchestration here, side effects in idempotent activities.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { NotificationActivities } from '../notifications/contract.ts';
import type { ProductCreatedInput } from './contract.ts';

const { productAnnouncement, sendNotification } = proxyActivities<NotificationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

export async function productCreatedWorkflow({ productId }: ProductCreatedInput): Promise<{ sent: number }> {
  const announcement = await productAnnouncement(productId);
  if (!announcement) return { sent: 0 };
  const { workflowId } = workflowInfo();
  for (const recipient of announcement.recipients) {
    await sendNotification({
      dedupeKey: `${workflowId}:${recipient}`,
      organizationId: announcement.organizationId,
      kind: 'product.created',
      recipient,
      subject: announcement.subject,
      text: announcement.text,
    });
  }
  return { sent: announcement.recipients.length };
}
