/**
 * The subscription workflow on Temporal's time-skipping server with its real activities against a
 * test database (orders, charges and outbox events are real rows; the sandbox processor charges the
 * saved cards). Benefit requests are recorded (other modules own them); mails are recorded and also
 * sent through SMTP to the mail catcher (MailDev).
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { createDeps, closeDeps, type Deps } from '../../api/src/deps.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { Discount } from '../../api/src/modules/discounts/entities.ts';
import { Order } from '../../api/src/modules/orders/entities.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { periodEnd } from '../../api/src/modules/pricing/index.ts';
import { Product, ProductBenefit, ProductPrice } from '../../api/src/modules/products/entities.ts';
import { Benefit } from '../../api/src/modules/benefits/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { createSubscriptionActivities } from '../../workers/src/activities/subscriptions.activities.ts';
import { createNotificationActivities } from '../../workers/src/activities/notifications.activities.ts';
import { subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import { createTestDatabase, testConfig } from '../harness.ts';
import { dropDatabase } from '../../infra/src/services.ts';
import { timeSkippingEnv, timeSkippingWorker } from '../time-skipping.ts';

export interface BenefitCall {
  action: 'grant' | 'revoke';
  scope: { customerId: string; productId: string; subscriptionId: string | null; orderId: string | null };
}
export interface MailCall {
  dedupeKey: string;
  kind: string;
  recipient: string;
  subject: string;
  text: string;
}

export interface Lifecycle {
  env: TestWorkflowEnvironment;
  deps: Deps;
  worker: Worker;
  taskQueue: string;
  benefitCalls: BenefitCall[];
  mails: MailCall[];
  close(): Promise<void>;
}

/** `overrides`: configuration of the test's worker (e.g. USAGE_SETTLE_SECONDS). */
export async function startLifecycle(overrides: Record<string, string> = {}): Promise<Lifecycle> {
  const databaseUrl = await createTestDatabase();
  const cfg = testConfig({ ...overrides, DATABASE_URL: databaseUrl });
  const deps = await createDeps(cfg, 'test');
  const env = await timeSkippingEnv();
  const taskQueue = `subscriptions-${randomUUID()}`;
  const benefitCalls: BenefitCall[] = [];
  const mails: MailCall[] = [];
  const notifications = createNotificationActivities(deps);
  const worker = await timeSkippingWorker(env, taskQueue, {
    ...createSubscriptionActivities(deps),
    async requestBenefitAction(action: BenefitCall['action'], scope: BenefitCall['scope']) {
      benefitCalls.push({ action, scope });
    },
    // Recorded, and also sent for real (SMTP to the mail catcher) by the worker's own activity.
    async sendNotification(input: MailCall & { organizationId: string | null }) {
      if (!mails.some((m) => m.dedupeKey === input.dedupeKey)) mails.push(input);
      return notifications.sendNotification(input);
    },
  });
  return {
    env,
    deps,
    worker,
    taskQueue,
    benefitCalls,
    mails,
    async close() {
      await env.teardown();
      await closeDeps(deps);
      await dropDatabase(databaseUrl).catch(() => {});
    },
  };
}

export interface Seeded {
  subscriptionId: string;
  customerId: string;
  productId: string;
  orgId: string;
  email: string;
  startedAt: Date;
}

/** A new recurring product of a new organization. */
export async function seedProduct(lc: Lifecycle, orgId: string, amount: number, name = 'Plan'): Promise<{ productId: string; priceId: string }> {
  const em = lc.deps.orm.em.fork();
  const product = em.create(Product, { organization: orgId, name, description: null, recurringInterval: 'month', isArchived: false, metadata: {} });
  const price = em.create(ProductPrice, {
    product,
    amountType: 'fixed',
    priceCurrency: 'usd',
    priceAmount: amount,
    minimumAmount: null,
    maximumAmount: null,
    presetAmount: null,
    meter: null,
    unitAmount: null,
    capAmount: null,
    isArchived: false,
  });
  await em.flush();
  return { productId: product.id, priceId: price.id };
}

/**
 * An active monthly subscription started at `startedAt` (its first period paid at checkout) of a
 * product with one custom benefit, with a card saved at the sandbox processor (`token` decides whether off-session charges succeed).
 */
export async function seedSubscription(
  lc: Lifecycle,
  opts: {
    startedAt: Date;
    amount: number;
    token?: string;
    discount?: { basisPoints: number; months: number } | null;
    settings?: Record<string, unknown>;
  },
): Promise<Seeded> {
  const em = lc.deps.orm.em.fork();
  const processor = lc.deps.processor;
  const slug = `org-${randomUUID().slice(0, 8)}`;
  const org = em.create(Organization, {
    name: `Org ${slug}`,
    slug,
    socials: [],
    featureSettings: {},
    subscriptionSettings: opts.settings ?? {},
    metadata: {},
  });
  const email = `subscriber-${randomUUID().slice(0, 8)}@example.com`;
  const pc = await processor.createCustomer({ email, name: 'Sam Subscriber', idempotencyKey: `seed:${email}` });
  const customer = em.create(Customer, {
    organization: org,
    email,
    name: 'Sam Subscriber',
    billingAddress: { country: 'US' } as Customer['billingAddress'],
    metadata: {},
    processorCustomerId: pc.id,
  });
  await em.flush();
  const saved = await processor.setupPaymentMethod({ confirmationTokenId: opts.token ?? 'tok_visa', processorCustomerId: pc.id, idempotencyKey: `seed-pm:${email}` });
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
  await em.flush();
  const { productId, priceId } = await seedProduct(lc, org.id, opts.amount);
  // A benefit, so each paid cycle asks for the product's benefits again.
  const benefit = em.create(Benefit, { organization: org, type: 'custom', description: 'Support', properties: { note: 'Write to us' }, deletedAt: null });
  em.create(ProductBenefit, { product: productId, benefit, order: 0 });
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
  const first = opts.discount ? opts.amount - Math.round((opts.amount * opts.discount.basisPoints) / 10_000) : opts.amount;
  const sub = em.create(Subscription, {
    organization: org,
    customer,
    product: productId,
    price: priceId,
    discount,
    checkout: null,
    amount: first,
    currency: 'usd',
    recurringInterval: 'month',
    status: 'active',
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
  return { subscriptionId: sub.id, customerId: customer.id, productId, orgId: org.id, email, startedAt: opts.startedAt };
}

export async function startWorkflow(lc: Lifecycle, subscriptionId: string, dunningDelaysMs?: number[]) {
  return lc.env.client.workflow.start('subscriptionWorkflow', {
    taskQueue: lc.taskQueue,
    workflowId: subscriptionWorkflowId(subscriptionId),
    args: [{ subscriptionId, ...(dunningDelaysMs ? { dunningDelaysMs } : {}) }],
  });
}

export async function envNow(lc: Lifecycle): Promise<Date> {
  return new Date(await lc.env.currentTimeMs());
}

/** Skips Temporal time to `at` (plus a minute), when it is in the future. */
export async function skipTo(lc: Lifecycle, at: Date): Promise<void> {
  const ms = at.getTime() - (await lc.env.currentTimeMs()) + 60_000;
  if (ms > 0) await lc.env.sleep(ms);
}

export async function until<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function ordersOf(lc: Lifecycle, subscriptionId: string) {
  return lc.deps.orm.em.fork().find(Order, { subscription: subscriptionId }, { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

export async function subscriptionRow(lc: Lifecycle, subscriptionId: string) {
  return lc.deps.orm.em.fork().findOneOrFail(Subscription, { id: subscriptionId });
}

/** The organization's outbox events (one organization per seeded subscription), oldest first. */
export async function eventsOf(lc: Lifecycle, orgId: string) {
  const rows = await lc.deps.orm.em.fork().find(OutboxEvent, { organizationId: orgId }, { orderBy: { createdAt: 'asc' } });
  return rows.map((r) => ({ type: r.type, data: r.data as Record<string, any> }));
}

/** The next UTC date at 12:00 with this month/day after `from` (e.g. the next Jan 31). */
export function nextDate(from: Date, month: number, day: number): Date {
  for (let y = from.getUTCFullYear(); ; y++) {
    const d = new Date(Date.UTC(y, month, day, 12));
    if (d.getUTCMonth() === month && d.getTime() > from.getTime()) return d;
  }
}

/** How many events of each type. */
export function countTypes(events: { type: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) out[e.type] = (out[e.type] ?? 0) + 1;
  return out;
}

/** An order's money figures, for comparing whole orders in one assertion. */
export const amounts = (o: { subtotalAmount: number; discountAmount: number; netAmount: number; taxAmount: number; totalAmount: number }) => ({
  subtotal: o.subtotalAmount,
  discount: o.discountAmount,
  net: o.netAmount,
  tax: o.taxAmount,
  total: o.totalAmount,
});
