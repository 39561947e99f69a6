/**
 * Usage billing on Temporal's time-skipping server: the subscription workflow with its real
 * activities against a test database (lifecycle-helpers' setup, with USAGE_SETTLE_SECONDS=0 so an
 * event ingested before a renewal is billed by it), and seeding of metered products and events.
 */
import { randomUUID } from 'node:crypto';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { Discount } from '../../api/src/modules/discounts/entities.ts';
import { insertEvents } from '../../api/src/modules/events/service.ts';
import { METER_CREDITED_EVENT } from '../../api/src/modules/benefits/types/meter-credit.ts';
import { Meter } from '../../api/src/modules/meters/entities.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { periodEnd } from '../../api/src/modules/pricing/index.ts';
import { Product, ProductPrice } from '../../api/src/modules/products/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { TaxRate } from '../../api/src/modules/tax-rates/entities.ts';
import { startLifecycle, type Lifecycle } from '../subscriptions/lifecycle-helpers.ts';

export function startBilling(): Promise<Lifecycle> {
  return startLifecycle({ USAGE_SETTLE_SECONDS: '0' });
}

export interface MeteredSeed {
  subscriptionId: string;
  customerId: string;
  orgId: string;
  meterId: string;
  meteredPriceId: string;
  fixedPriceId: string | null;
}

/**
 * An active monthly subscription started at `startedAt` of a product with an optional fixed price and
 * one metered price on an "API calls" meter (sum of `units` over `api_call` events), a saved card,
 * an optional repeating percentage discount and a tax rate for the customer's country.
 */
export async function seedMetered(
  lc: Pick<Lifecycle, 'deps'>,
  opts: {
    /** An existing organization (e.g. a signed-up seller's); by default a new one. */
    orgId?: string;
    startedAt: Date;
    fixedAmount: number | null;
    unitAmount: string;
    capAmount: number | null;
    discount?: { basisPoints: number; months: number } | null;
    tax?: { country: string; basisPoints: number } | null;
    /** `trialing`: the first period is a trial (ends at `startedAt` + 1 month), nothing charged yet. */
    status?: 'active' | 'trialing';
  },
): Promise<MeteredSeed> {
  const em = lc.deps.orm.em.fork();
  const processor = lc.deps.processor;
  const slug = `org-${randomUUID().slice(0, 8)}`;
  const org = opts.orgId
    ? em.getReference(Organization, opts.orgId)
    : em.create(Organization, { name: `Org ${slug}`, slug, socials: [], featureSettings: {}, subscriptionSettings: {}, metadata: {} });
  const email = `metered-${randomUUID().slice(0, 8)}@example.com`;
  const pc = await processor.createCustomer({ email, name: 'Mia Metered', idempotencyKey: `seed:${email}` });
  const country = opts.tax?.country ?? 'US';
  const customer = em.create(Customer, {
    organization: org,
    email,
    name: 'Mia Metered',
    billingAddress: { country } as Customer['billingAddress'],
    metadata: {},
    processorCustomerId: pc.id,
  });
  if (opts.tax) em.create(TaxRate, { organization: org, country: opts.tax.country, basisPoints: opts.tax.basisPoints });
  await em.flush();
  const saved = await processor.setupPaymentMethod({ confirmationTokenId: 'tok_visa', processorCustomerId: pc.id, idempotencyKey: `seed-pm:${email}` });
  if (saved.status !== 'succeeded') throw new Error('card not saved');
  const pm = em.create(PaymentMethod, {
    customer,
    processor: processor.name,
    processorId: saved.paymentMethod.id,
    brand: saved.paymentMethod.brand,
    last4: saved.paymentMethod.last4,
    expMonth: saved.paymentMethod.expMonth,
    expYear: saved.paymentMethod.expYear,
    wallet: null,
    isDefault: true,
    deletedAt: null,
  });
  const meter = em.create(Meter, {
    organization: org,
    name: 'API calls',
    filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api_call' }] },
    aggregation: { func: 'sum', property: 'units' },
    metadata: {},
  });
  const product = em.create(Product, { organization: org, name: 'Usage plan', description: null, recurringInterval: 'month', isArchived: false, metadata: {} });
  const common = { product, priceCurrency: 'usd', minimumAmount: null, maximumAmount: null, presetAmount: null, isArchived: false };
  const fixed =
    opts.fixedAmount != null
      ? em.create(ProductPrice, { ...common, amountType: 'fixed', priceAmount: opts.fixedAmount, meter: null, unitAmount: null, capAmount: null })
      : null;
  const metered = em.create(ProductPrice, { ...common, amountType: 'metered_unit', priceAmount: null, meter, unitAmount: opts.unitAmount, capAmount: opts.capAmount });
  const discount = opts.discount
    ? em.create(Discount, {
        organization: org,
        name: 'Launch',
        code: null,
        type: 'percentage',
        duration: 'repeating',
        durationInMonths: opts.discount.months,
        amount: null,
        currency: null,
        basisPoints: opts.discount.basisPoints,
        startsAt: null,
        endsAt: null,
        maxRedemptions: null,
        metadata: {},
        deletedAt: null,
      })
    : null;
  await em.flush();
  const sub = em.create(Subscription, {
    organization: org,
    customer,
    product,
    price: fixed ?? metered,
    discount,
    checkout: null,
    amount: opts.fixedAmount ?? 0,
    currency: 'usd',
    recurringInterval: 'month',
    status: opts.status ?? 'active',
    currentPeriodStart: opts.startedAt,
    currentPeriodEnd: periodEnd(opts.startedAt, 'month'),
    cancelAtPeriodEnd: false,
    canceledAt: null,
    startedAt: opts.startedAt,
    endsAt: null,
    endedAt: null,
    customerCancellationReason: null,
    customerCancellationComment: null,
    paymentMethod: pm,
    metadata: {},
  });
  await em.flush();
  return { subscriptionId: sub.id, customerId: customer.id, orgId: org.id, meterId: meter.id, meteredPriceId: metered.id, fixedPriceId: fixed?.id ?? null };
}

/** Ingests `api_call` events (each `units`) for the customer at `timestamp`. */
export async function ingest(lc: Pick<Lifecycle, 'deps'>, seed: MeteredSeed, timestamp: Date, units: number[], name = 'api_call', customerId = seed.customerId) {
  await insertEvents(
    lc.deps.orm.em.fork(),
    units.map((u) => ({ organizationId: seed.orgId, name, timestamp, customerId, metadata: { units: u } })),
    'user',
  );
}

/** Credits `units` of the meter to the customer, as a meter_credit grant does. */
export async function credit(lc: Pick<Lifecycle, 'deps'>, seed: MeteredSeed, units: number) {
  await insertEvents(lc.deps.orm.em.fork(), [
    { organizationId: seed.orgId, name: METER_CREDITED_EVENT, timestamp: new Date(), customerId: seed.customerId, metadata: { meter_id: seed.meterId, units, rollover: false } },
  ]);
}
