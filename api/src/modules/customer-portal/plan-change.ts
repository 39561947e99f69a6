/**
 * POST /v1/customer-portal/subscriptions/{id}/preview (bearer customer session): what changing the
 * subscription to another product would bill, computed by the same quote the change applies
 * (`quoteProductChange` in subscriptions/service.ts) at the moment of the request, without changing
 * anything. With `invoice` proration a positive net is charged at once (subtotal + tax, as the
 * `subscription_update` order will be); otherwise it is carried to the next renewal's order.
 */
import { z } from 'zod/v4';
import { NotPermitted, ResourceNotFound } from '../../kit/errors.ts';
import type { CustomerPrincipal, Principal } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { Subscription } from '../subscriptions/entities.ts';
import { quoteProductChange, subscriptionSettings } from '../subscriptions/service.ts';
import { checkoutScope, requireFullSession, withinScope } from './scope.ts';

const asCustomer = (p: Principal) => p as CustomerPrincipal;

export const planChangePreviewSchema = z.object({
  subscription_id: z.uuid(),
  product_id: z.uuid(),
  product_price_id: z.uuid(),
  currency: z.string(),
  /** The new amount per period, from the next renewal on (the subscription's discount applied if it still applies). */
  amount: z.number().int(),
  recurring_interval: z.string(),
  proration_behavior: z.enum(['invoice', 'prorate']),
  /** Credit for the unused part of the current price (≤ 0), debit for the new price over the same time, and their sum. */
  proration: z.object({ credit: z.number().int(), debit: z.number().int(), net: z.number().int() }),
  /** Charged now (`invoice` and a positive net), else null. */
  charged_now: z.object({ subtotal_amount: z.number().int(), tax_amount: z.number().int(), total_amount: z.number().int() }).nullable(),
  /** Added to the next renewal's order (negative: a credit), when not charged now. */
  next_invoice_adjustment: z.number().int(),
  current_period_end: z.string().nullable(),
  quoted_at: z.string(),
});

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/customer-portal/subscriptions/:id/preview',
    summary: 'Preview what changing one of the customer’s subscriptions to another product bills (nothing changes)',
    tags: ['customer_portal'],
    auth: { kinds: ['customer'], scopes: ['customer_portal:read'] },
    errors: [403, 404],
    params: z.object({ id: z.uuid() }),
    body: z.object({ product_id: z.uuid() }),
    response: planChangePreviewSchema,
    async handler({ params, body, principal, em }) {
      const scope = await checkoutScope(em, asCustomer(principal));
      const s = await em.findOne(Subscription, withinScope({ id: params.id, customer: asCustomer(principal).customerId }, scope?.subscriptionIds), {
        populate: ['organization', 'customer', 'product', 'price', 'discount'],
      });
      if (!s) throw ResourceNotFound('Subscription not found');
      if (scope) requireFullSession(principal, 'Changing the plan');
      if (!subscriptionSettings(s.organization.subscriptionSettings).allow_customer_updates) {
        throw NotPermitted('This organization does not allow customers to change their subscription.');
      }
      const at = new Date();
      const q = await quoteProductChange(em, s, { productId: body.product_id, prorationBehavior: null }, at);
      return {
        subscription_id: s.id,
        product_id: q.product.id,
        product_price_id: q.price.id,
        currency: s.currency,
        amount: q.newAmount,
        recurring_interval: q.product.recurringInterval!,
        proration_behavior: q.behavior,
        proration: { credit: q.credit, debit: q.debit, net: q.net },
        charged_now: q.billedNow ? { subtotal_amount: q.net, tax_amount: q.tax, total_amount: q.net + q.tax } : null,
        next_invoice_adjustment: q.billedNow ? 0 : q.net,
        current_period_end: s.currentPeriodEnd?.toISOString() ?? null,
        quoted_at: at.toISOString(),
      };
    },
  }),
];
