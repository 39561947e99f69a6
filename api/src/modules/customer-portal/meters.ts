/**
 * /v1/customer-portal/customer-meters (bearer customer session): the session customer's usage per
 * meter in the current period of their live metered subscriptions, as Polar's customer meters, plus
 * what the portal shows of the period: its dates, the subscription, the unit price and cap and the
 * usage charge so far (the upcoming invoice's usage line: `quoteCycle`, credits consumed first,
 * capped). Another customer's meter is a 404. docs/billing.md "Customer portal".
 *
 * The id of a customer meter is derived from the customer and the meter (a name-based UUID), so it
 * stays the same across periods and renewals without a stored row.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery } from '../../kit/pagination.ts';
import type { CustomerPrincipal, Principal } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { customerAuth, idParams, listOf } from '../../kit/route-helpers.ts';
import { formatDecimal, parseDecimal, subtractDecimal, ZERO } from '../pricing/metered.ts';
import { normalizeDecimal } from '../products/schemas.ts';
import { Subscription } from '../subscriptions/entities.ts';
import { SUBSCRIPTION_POPULATE } from '../subscriptions/schemas.ts';
import { BILLABLE_STATUSES, quoteCycle } from '../subscriptions/service.ts';
import { databaseNow, meteredPrices } from '../usage/service.ts';
import { checkoutScope, withinScope } from './scope.ts';

const read = customerAuth('customer_portal:read');
const asCustomer = (p: Principal) => p as CustomerPrincipal;

/** Namespace of the customer meter ids (UUID version 5 of `<customer id>:<meter id>`). */
const CUSTOMER_METER_NAMESPACE = 'b7d3c1e2-4f5a-5b6c-8d7e-9f0a1b2c3d4e';

/** The stable id of a customer's meter: a name-based (SHA-1, version 5) UUID of the customer and the meter. */
export function customerMeterId(customerId: string, meterId: string): string {
  const ns = Buffer.from(CUSTOMER_METER_NAMESPACE.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(ns).update(`${customerId}:${meterId}`).digest();
  const b = hash.subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** a + b, exact. */
const addDecimals = (a: string, b: string) => formatDecimal(subtractDecimal(parseDecimal(a), subtractDecimal(ZERO, parseDecimal(b))));

export const customerMeterSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  customer_id: z.uuid(),
  meter_id: z.uuid(),
  /** Usage of the current period not billed yet (the meter's aggregation). */
  consumed_units: z.number(),
  /** Units ever credited by meter_credit benefits. */
  credited_units: z.number(),
  /** Credits left − consumed_units; negative: units that will be billed. */
  balance: z.number(),
  meter: z.object({ id: z.uuid(), created_at: z.string(), modified_at: z.string().nullable(), name: z.string() }),
  subscription_id: z.uuid(),
  product_price_id: z.uuid(),
  period_start: z.string(),
  period_end: z.string(),
  currency: z.string(),
  /** Price per unit in minor units (decimal string). */
  unit_amount: z.string(),
  cap_amount: z.number().int().nullable(),
  /** Credits of the balance this period's usage consumes so far (decimal string). */
  credits_used: z.string(),
  /** Units billed after credits (decimal string). */
  billable_units: z.string(),
  /** The usage charge so far, before discount and tax (minor units), as the upcoming invoice's usage line. */
  amount: z.number().int(),
  /** The subscription's discount on that charge, as the upcoming invoice splits it. */
  discount_amount: z.number().int(),
  /** Tax on that charge (after discount), as the upcoming invoice splits it. */
  tax_amount: z.number().int(),
});
export type CustomerMeterOut = z.infer<typeof customerMeterSchema>;

const SORT_KEYS = ['created_at', 'modified_at', 'meter_id', 'meter_name', 'consumed_units', 'credited_units', 'balance'] as const;
type SortKey = (typeof SORT_KEYS)[number];

const sortValue: Record<SortKey, (m: CustomerMeterOut) => string | number> = {
  created_at: (m) => m.created_at,
  modified_at: (m) => m.modified_at ?? '',
  meter_id: (m) => m.meter_id,
  meter_name: (m) => m.meter.name.toLowerCase(),
  consumed_units: (m) => m.consumed_units,
  credited_units: (m) => m.credited_units,
  balance: (m) => m.balance,
};

/** Orders by the sorting keys (`-` descending), then by id so pages are stable. */
export function sortCustomerMeters(items: CustomerMeterOut[], sorting: string[]): CustomerMeterOut[] {
  const keys = sorting.map((s) => ({ get: sortValue[s.replace(/^-/, '') as SortKey], dir: s.startsWith('-') ? -1 : 1 }));
  return [...items].sort((a, b) => {
    for (const { get, dir } of keys) {
      const x = get(a);
      const y = get(b);
      if (x < y) return -dir;
      if (x > y) return dir;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}

/**
 * The customer's meters: one per meter of the metered prices of their live (billable, not ended)
 * subscriptions within the session's reach, with the current period's figures. When several
 * subscriptions bill the same meter, the earliest started one's period is shown; several prices of
 * one subscription on the same meter add their charges (the unit price and cap are the first's).
 */
export async function customerMeters(em: EntityManager, principal: CustomerPrincipal): Promise<CustomerMeterOut[]> {
  const scope = await checkoutScope(em, principal);
  const subscriptions = await em.find(
    Subscription,
    withinScope(
      { customer: principal.customerId, status: { $in: BILLABLE_STATUSES }, endedAt: null, currentPeriodEnd: { $ne: null } },
      scope?.subscriptionIds,
    ),
    { populate: [...SUBSCRIPTION_POPULATE, 'organization', 'product.prices.meter'], orderBy: [{ startedAt: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }] },
  );
  const metered = subscriptions.filter((s) => meteredPrices(s).length);
  if (!metered.length) return [];
  const now = await databaseNow(em);
  const out = new Map<string, CustomerMeterOut>();
  for (const s of metered) {
    const periodEnd = s.currentPeriodEnd!;
    const q = await quoteCycle(em, s, { periodStart: s.currentPeriodStart, periodEnd, billedThrough: now });
    const createdAt = (s.startedAt ?? s.createdAt).toISOString();
    for (const u of q.usage) {
      const meter = u.meter;
      if (out.has(meter.id) && out.get(meter.id)!.subscription_id !== s.id) continue;
      const line = q.lines.find((l) => l.productPriceId === u.price.id && l.meterId === meter.id);
      const amount = line?.amount ?? u.line.amount;
      const discount = line?.discountAmount ?? 0;
      const tax = line?.taxAmount ?? 0;
      const seen = out.get(meter.id);
      if (seen) {
        seen.amount += amount;
        seen.discount_amount += discount;
        seen.tax_amount += tax;
        seen.credits_used = addDecimals(seen.credits_used, u.line.creditsUsed);
        seen.billable_units = addDecimals(seen.billable_units, u.line.billableUnits);
        continue;
      }
      out.set(meter.id, {
        id: customerMeterId(principal.customerId, meter.id),
        created_at: createdAt,
        modified_at: s.currentPeriodStart.toISOString() > createdAt ? s.currentPeriodStart.toISOString() : null,
        customer_id: principal.customerId,
        meter_id: meter.id,
        consumed_units: Number(u.line.usage),
        credited_units: Number(u.credited),
        balance: Number(u.creditBalance) - Number(u.line.usage),
        meter: { id: meter.id, created_at: meter.createdAt.toISOString(), modified_at: meter.modifiedAt?.toISOString() ?? null, name: meter.name },
        subscription_id: s.id,
        product_price_id: u.price.id,
        period_start: s.currentPeriodStart.toISOString(),
        period_end: periodEnd.toISOString(),
        currency: s.currency,
        unit_amount: normalizeDecimal(u.price.unitAmount!) ?? u.price.unitAmount!,
        cap_amount: u.price.capAmount ?? null,
        credits_used: u.line.creditsUsed,
        billable_units: u.line.billableUnits,
        amount,
        discount_amount: discount,
        tax_amount: tax,
      });
    }
  }
  return [...out.values()];
}

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/customer-portal/customer-meters/',
    summary: "List the customer's meters: this period's usage, credits and balance",
    tags: ['customer-portal'],
    auth: read,
    query: z.object({
      ...paginationQuery,
      meter_id: queryList(z.uuid()).optional(),
      query: z.string().max(255).optional(),
      sorting: sortingQuery(SORT_KEYS, ['meter_name']),
    }),
    response: listOf(customerMeterSchema),
    async handler({ query, principal, em }) {
      let items = await customerMeters(em, asCustomer(principal));
      if (query.meter_id) items = items.filter((m) => query.meter_id!.includes(m.meter_id));
      const needle = query.query?.trim().toLowerCase();
      if (needle) items = items.filter((m) => m.meter.name.toLowerCase().includes(needle));
      const { offset, limit } = pageOffset(query);
      return paginated(sortCustomerMeters(items, query.sorting).slice(offset, offset + limit), items.length, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/customer-portal/customer-meters/:id',
    summary: "Get one of the customer's meters",
    tags: ['customer-portal'],
    auth: read,
    params: idParams,
    response: customerMeterSchema,
    async handler({ params, principal, em }) {
      const m = (await customerMeters(em, asCustomer(principal))).find((x) => x.id === params.id);
      if (!m) throw ResourceNotFound('Customer meter not found');
      return m;
    },
  }),
];
