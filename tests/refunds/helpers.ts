/** Helpers for the refund tests: a seller with the scopes refunds need, and orders from real confirmed checkouts. */
import { randomUUID } from 'node:crypto';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { CONFIRM_SCOPES, buyer, call, confirmRaw, fulfilled, newCheckout, until, type Seller } from '../confirm/helpers.ts';
import type { TestServer } from '../harness.ts';

export { call, until, type Seller };

export const REFUND_SCOPES = [...CONFIRM_SCOPES, 'refunds:read', 'refunds:write', 'organizations:write'];

export const refundSeller = (srv: TestServer): Promise<Seller> => sellerWithSdk(srv, REFUND_SCOPES);

export const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

/**
 * A buyer pays a checkout for the product with the sandbox test card; answers the paid order (raw
 * read model) once the checkout-confirm workflow has fulfilled it.
 */
export async function buy(srv: TestServer, s: Seller, productId: string): Promise<Record<string, any>> {
  const checkout = await newCheckout(srv, s, productId);
  const email = `buyer-${randomUUID().slice(0, 8)}@example.com`;
  const res = await confirmRaw(srv, checkout.client_secret, { ...buyer(email), confirmation_token_id: 'tok_visa' });
  if (res.status !== 200) throw new Error(`confirm failed: ${res.status} ${JSON.stringify(res.body)}`);
  if ((await fulfilled(srv, s, checkout.id)) !== 'succeeded') throw new Error('checkout not fulfilled');
  const orders = await call(srv.url, s.token, 'GET', `/v1/orders/?checkout_id=${checkout.id}`);
  const order = orders.body.items[0];
  if (!order || order.status !== 'paid') throw new Error(`no paid order: ${JSON.stringify(orders.body)}`);
  return order;
}

/** Polls the order until the refund workflow has settled it to `status`. */
export function orderWithStatus(srv: TestServer, s: Seller, orderId: string, status: string, refundedAmount?: number) {
  return until(async () => {
    const res = await call(srv.url, s.token, 'GET', `/v1/orders/${orderId}`);
    const ok = res.body.status === status && (refundedAmount === undefined || res.body.refunded_amount === refundedAmount);
    return ok ? (res.body as Record<string, any>) : null;
  });
}
