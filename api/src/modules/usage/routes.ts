/**
 * GET /v1/subscriptions/{id}/upcoming-invoice (`subscriptions:read`): what the subscription's next
 * renewal would bill if it ran now — the price line, the usage so far of each metered price (credits
 * consumed first, capped), the discount, tax and total — and per meter the usage and credit balance.
 * Shape in docs/billing.md.
 */
import { z } from 'zod/v4';
import { ResourceNotFound } from '../../kit/errors.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { sellerAuth } from '../../kit/route-helpers.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { periodEnd } from '../pricing/index.ts';
import { formatDecimal, parseDecimal, subtractDecimal } from '../pricing/metered.ts';
import { Subscription } from '../subscriptions/entities.ts';
import { SUBSCRIPTION_POPULATE } from '../subscriptions/schemas.ts';
import { BILLABLE_STATUSES, quoteCycle } from '../subscriptions/service.ts';
import { databaseNow } from './service.ts';

const READ: AuthRequirement = sellerAuth('subscriptions:read');

const lineSchema = z.object({
  label: z.string(),
  amount: z.number().int(),
  discount_amount: z.number().int(),
  tax_amount: z.number().int(),
  proration: z.boolean(),
  product_price_id: z.uuid(),
  meter_id: z.uuid().nullable(),
  usage: z.string().nullable(),
  credits_used: z.string().nullable(),
  billable_units: z.string().nullable(),
  unit_amount: z.string().nullable(),
  cap_amount: z.number().int().nullable(),
});

export const upcomingInvoiceSchema = z.object({
  subscription_id: z.uuid(),
  currency: z.string(),
  period_start: z.string(),
  period_end: z.string(),
  next_period_end: z.string().nullable(),
  will_renew: z.boolean(),
  subtotal_amount: z.number().int(),
  discount_amount: z.number().int(),
  net_amount: z.number().int(),
  tax_amount: z.number().int(),
  total_amount: z.number().int(),
  lines: z.array(lineSchema),
  meters: z.array(
    z.object({ meter_id: z.uuid(), name: z.string(), consumed_units: z.string(), credited_units: z.string(), balance: z.string() }),
  ),
});
export type UpcomingInvoice = z.infer<typeof upcomingInvoiceSchema>;

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/subscriptions/:id/upcoming-invoice',
    summary: 'Preview the upcoming invoice of a subscription',
    tags: ['subscriptions'],
    auth: READ,
    params: z.object({ id: z.uuid() }),
    response: upcomingInvoiceSchema,
    async handler({ params, principal, em }) {
      const orgIds = await visibleOrganizationIds(em, principal);
      const s = await em.findOne(Subscription, { id: params.id, organization: { $in: orgIds } }, { populate: [...SUBSCRIPTION_POPULATE, 'organization'] });
      if (!s) throw ResourceNotFound('Subscription not found');
      if (!s.currentPeriodEnd || s.endedAt || !BILLABLE_STATUSES.includes(s.status)) throw ResourceNotFound('This subscription has no upcoming invoice.');
      const q = await quoteCycle(em, s, { periodStart: s.currentPeriodStart, periodEnd: s.currentPeriodEnd, billedThrough: await databaseNow(em) });
      const a = q.amounts;
      const startedAt = s.startedAt ?? s.createdAt;
      return {
        subscription_id: s.id,
        currency: s.currency,
        period_start: s.currentPeriodStart.toISOString(),
        period_end: s.currentPeriodEnd.toISOString(),
        next_period_end: s.cancelAtPeriodEnd ? null : periodEnd(s.currentPeriodEnd, s.recurringInterval, startedAt.getUTCDate()).toISOString(),
        will_renew: !s.cancelAtPeriodEnd,
        subtotal_amount: a.subtotal,
        discount_amount: a.discount,
        net_amount: a.net,
        tax_amount: a.tax,
        total_amount: a.total,
        lines: q.lines.map((l) => ({
          label: l.label,
          amount: l.amount,
          discount_amount: l.discountAmount,
          tax_amount: l.taxAmount,
          proration: l.proration,
          product_price_id: l.productPriceId,
          meter_id: l.meterId ?? null,
          usage: l.usage ?? null,
          credits_used: l.creditsUsed ?? null,
          billable_units: l.billableUnits ?? null,
          unit_amount: l.unitAmount ?? null,
          cap_amount: l.capAmount ?? null,
        })),
        meters: q.usage.map((u) => ({
          meter_id: u.meter.id,
          name: u.meter.name,
          consumed_units: u.line.usage,
          credited_units: u.credited,
          balance: subtractDecimalStrings(u.creditBalance, u.line.usage),
        })),
      };
    },
  }),
];

/** a − b, exact. */
const subtractDecimalStrings = (a: string, b: string) => formatDecimal(subtractDecimal(parseDecimal(a), parseDecimal(b)));
