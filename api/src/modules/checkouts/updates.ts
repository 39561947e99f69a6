/**
 * The seller's and the buyer's changes to an open checkout, each inside the caller's transaction:
 * lock the row, apply the change (service.ts `updateCheckout`), write it and its `checkout.updated` event.
 */
import type { EntityManager } from '../../kit/db.ts';
import type { Principal } from '../../kit/principals.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import type { Checkout } from './entities.ts';
import type { checkoutUpdatePublicSchema, checkoutUpdateSchema } from './schemas.ts';
import { serializeCheckout } from './schemas.ts';
import { getCheckoutBySecret, getVisibleCheckout, updateCheckout } from './service.ts';
import type { z } from 'zod/v4';

async function flushUpdated(tx: EntityManager, c: Checkout, publicUrl: string): Promise<Checkout> {
  await tx.flush();
  emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckout(c, publicUrl));
  await tx.flush();
  return c;
}

/** `PATCH /v1/checkouts/:id`: a checkout the seller can see (404 otherwise). */
export async function updateVisibleCheckout(
  tx: EntityManager,
  principal: Principal,
  id: string,
  body: z.infer<typeof checkoutUpdateSchema>,
  publicUrl: string,
): Promise<Checkout> {
  const c = await getVisibleCheckout(tx, principal, id, { lock: true });
  await updateCheckout(tx, c, body, 'seller');
  return flushUpdated(tx, c, publicUrl);
}

/** `PATCH /v1/checkouts/client/:client_secret`: the buyer's change by the checkout's client secret. */
export async function updateCheckoutBySecret(
  tx: EntityManager,
  clientSecret: string,
  body: z.infer<typeof checkoutUpdatePublicSchema>,
  publicUrl: string,
): Promise<Checkout> {
  const c = await getCheckoutBySecret(tx, clientSecret, { lock: true });
  await updateCheckout(tx, c, body, 'public');
  return flushUpdated(tx, c, publicUrl);
}
