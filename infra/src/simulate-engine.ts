/**
 * The billing simulator's engine (docs/billing.md, "Simulator"): one subscription's life of a
 * product, run by the real subscription workflow and activities (pricing, renewals, metered usage,
 * dunning) on Temporal's time-skipping server, against a scratch database.
 *
 * The product is read from `sourceUrl` (the running stack's database) inside a READ ONLY transaction:
 * nothing is written there. Its organization, product, prices, meters, tax rates (and the discount
 * asked for) are copied into a fresh scratch database with every migration applied; a buyer then
 * checks the product out through a checkout link there (the real checkout, confirmation with a
 * sandbox card and fulfilment: a trial starts as it would), usage events are ingested, and the
 * subscription workflow runs month after month. Mails are recorded, not sent; benefit requests are
 * recorded, not run. The scratch database is dropped at the end.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../api/src/config.ts';
import { closeDeps, createDeps, type Deps } from '../../api/src/deps.ts';
import { migrate } from '../../api/src/kit/db.ts';
import { CheckoutLink } from '../../api/src/modules/checkout-links/entities.ts';
import { findCheckoutLinkBySecret } from '../../api/src/modules/checkout-links/service.ts';
import { checkoutConfirmSchema, confirmCheckout } from '../../api/src/modules/checkouts/confirm.ts';
import { createCheckoutFromLink } from '../../api/src/modules/checkouts/service.ts';
import { Discount } from '../../api/src/modules/discounts/entities.ts';
import { insertEvents } from '../../api/src/modules/events/service.ts';
import { fulfilCheckout } from '../../api/src/modules/orders/fulfilment.ts';
import type { Order } from '../../api/src/modules/orders/entities.ts';
import { Order as OrderEntity } from '../../api/src/modules/orders/entities.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { Product } from '../../api/src/modules/products/entities.ts';
import { setSandboxCardOutcome } from '../../api/src/modules/payments/sandbox.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { createSubscriptionActivities } from '../../workers/src/activities/subscriptions.activities.ts';
import { WORKFLOWS_PATH } from '../../workers/src/worker.ts';
import { subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import { ROOT, dropDatabase, ensureDatabase } from './services.ts';

export interface UsageEvent {
  /** Days after the subscription starts (fractions allowed). */
  day: number;
  name: string;
  metadata: Record<string, string | number | boolean>;
}

export interface SimulationInput {
  sourceUrl: string;
  productId: string;
  months: number;
  usage?: UsageEvent[];
  /** The renewal (1 = the first after the purchase) from which the card declines. */
  declineAt?: number | null;
  /** The buyer's billing country (its tax rate applies). */
  country?: string;
  /** A discount of the product's organization applied at checkout. */
  discountId?: string | null;
  log?: (line: string) => void;
}

export interface SimLine {
  label: string;
  amount: number;
  discount: number;
  tax: number;
}
export interface SimOrder {
  at: string;
  billingReason: string;
  status: string;
  currency: string;
  lines: SimLine[];
  subtotal: number;
  discount: number;
  net: number;
  tax: number;
  total: number;
}
export interface SimStateChange {
  at: string;
  event: string;
  status: string;
  currentPeriodEnd: string | null;
}
export interface SimMail {
  at: string;
  kind: string;
  to: string;
  subject: string;
}
export interface SimulationReport {
  product: { id: string; name: string };
  startedAt: string;
  orders: SimOrder[];
  states: SimStateChange[];
  mails: SimMail[];
  charges: { at: string; orderIndex: number; outcome: string }[];
}

/** Reads `usage.csv`: a header with `day`, `name` and metadata columns (numbers and booleans parsed). */
export function parseUsageCsv(text: string): UsageEvent[] {
  const rows = text.split(/\r?\n/).filter((l) => l.trim() && !l.startsWith('#'));
  if (!rows.length) return [];
  const header = rows[0]!.split(',').map((h) => h.trim());
  const dayAt = header.indexOf('day');
  const nameAt = header.indexOf('name');
  if (dayAt < 0 || nameAt < 0) throw new Error('usage CSV: the header needs "day" and "name" columns');
  return rows.slice(1).map((row, i) => {
    const cells = row.split(',').map((c) => c.trim());
    const day = Number(cells[dayAt]);
    if (!Number.isFinite(day) || day < 0) throw new Error(`usage CSV line ${i + 2}: day must be a number ≥ 0`);
    const metadata: UsageEvent['metadata'] = {};
    header.forEach((h, j) => {
      if (j === dayAt || j === nameAt || cells[j] === undefined || cells[j] === '') return;
      const v = cells[j]!;
      metadata[h] = v === 'true' ? true : v === 'false' ? false : Number.isFinite(Number(v)) ? Number(v) : v;
    });
    return { day, name: cells[nameAt]!, metadata };
  });
}

/** One order as the simulator prints it: lines (the order's own, or its single price line), discount, tax, total. */
export function orderOf(o: Order, productName: string, at: string): SimOrder {
  const lines: SimLine[] = o.lines?.length
    ? o.lines.map((l) => ({ label: l.label, amount: l.amount, discount: l.discountAmount, tax: l.taxAmount }))
    : [{ label: productName, amount: o.subtotalAmount, discount: o.discountAmount, tax: o.taxAmount }];
  return {
    at,
    billingReason: o.billingReason,
    status: o.status,
    currency: o.currency,
    lines,
    subtotal: o.subtotalAmount,
    discount: o.discountAmount,
    net: o.netAmount,
    tax: o.taxAmount,
    total: o.totalAmount,
  };
}

const money = (currency: string, minor: number) => `${currency.toUpperCase()} ${(minor / 100).toFixed(2)}`;

/** The printed form of an order (no date: the same order prints the same whenever it is billed). */
export function formatOrder(o: SimOrder): string[] {
  const out = [`order ${o.billingReason} ${o.status}: subtotal ${money(o.currency, o.subtotal)}, discount ${money(o.currency, o.discount)}, tax ${money(o.currency, o.tax)}, total ${money(o.currency, o.total)}`];
  for (const l of o.lines) out.push(`  ${l.label}: ${money(o.currency, l.amount)} (discount ${money(o.currency, l.discount)}, tax ${money(o.currency, l.tax)})`);
  return out;
}

export function formatReport(r: SimulationReport): string {
  const day = (iso: string) => iso.slice(0, 10);
  const entries: { at: string; order: number; lines: string[] }[] = [];
  r.orders.forEach((o) => entries.push({ at: o.at, order: 1, lines: formatOrder(o).map((l, j) => (j ? `            ${l}` : `${day(o.at)}  ${l}`)) }));
  for (const c of r.charges) entries.push({ at: c.at, order: 2, lines: [`${day(c.at)}  charge of order #${c.orderIndex + 1}: ${c.outcome}`] });
  for (const s of r.states) entries.push({ at: s.at, order: 0, lines: [`${day(s.at)}  ${s.event}: ${s.status}${s.currentPeriodEnd ? ` (period ends ${day(s.currentPeriodEnd)})` : ''}`] });
  for (const m of r.mails) entries.push({ at: m.at, order: 3, lines: [`${day(m.at)}  mail ${m.kind} to ${m.to}: ${m.subject}`] });
  entries.sort((a, b) => a.at.localeCompare(b.at) || a.order - b.order);
  return [`Simulation of ${r.product.name} (${r.product.id}) from ${day(r.startedAt)}`, ...entries.flatMap((e) => e.lines)].join('\n');
}

/** Copies rows between databases (json columns re-encoded); `where` is a SQL condition with $1 = `value`. */
async function copyRows(src: pg.ClientBase, dst: pg.ClientBase, table: string, where: string, value: unknown): Promise<number> {
  const { rows } = await src.query(`select * from "${table}" where ${where}`, [value]);
  if (!rows.length) return 0;
  const types = await dst.query<{ column_name: string; data_type: string }>(
    `select column_name, data_type from information_schema.columns where table_name = $1 and table_schema = 'public'`,
    [table],
  );
  const known = new Map(types.rows.map((t) => [t.column_name, t.data_type]));
  for (const row of rows) {
    const cols = Object.keys(row).filter((c) => known.has(c));
    const values = cols.map((c) => (/json/.test(known.get(c)!) && row[c] !== null ? JSON.stringify(row[c]) : row[c]));
    await dst.query(
      `insert into "${table}" (${cols.map((c) => `"${c}"`).join(', ')}) values (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
      values,
    );
  }
  return rows.length;
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`simulation: ${what} not reached in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function simulate(input: SimulationInput): Promise<SimulationReport> {
  const log = input.log ?? (() => {});
  const scratchName = `emporia_sim_${randomBytes(5).toString('hex')}`;
  const scratchUrl = new URL(input.sourceUrl);
  scratchUrl.pathname = `/${scratchName}`;
  await ensureDatabase(scratchUrl.toString(), { recreate: true });
  let deps: Deps | undefined;
  let env: TestWorkflowEnvironment | undefined;
  try {
    const cfg = loadConfig({
      ...process.env,
      DATABASE_URL: scratchUrl.toString(),
      DATABASE_POOL_MAX: '4',
      LOG_LEVEL: 'silent',
      PAYMENT_PROCESSOR: 'sandbox',
      USAGE_SETTLE_SECONDS: '0',
      TEMPORAL_TASK_QUEUE: `simulate-${randomUUID()}`,
    });
    deps = await createDeps(cfg, 'simulate');
    await migrate(deps.orm);

    // 1. The product and what it needs, read inside a read-only transaction, copied to the scratch database.
    const src = new pg.Client({ connectionString: input.sourceUrl });
    const dst = new pg.Client({ connectionString: scratchUrl.toString() });
    await src.connect();
    await dst.connect();
    let product: { id: string; name: string; organization_id: string };
    try {
      await src.query('begin transaction read only');
      const found = await src.query(`select id, name, organization_id from products where id = $1`, [input.productId]);
      if (!found.rows[0]) throw new Error(`No product ${input.productId} in the source database.`);
      product = found.rows[0];
      await copyRows(src, dst, 'organizations', 'id = $1', product.organization_id);
      await copyRows(src, dst, 'meters', `id in (select meter_id from product_prices where product_id = $1 and meter_id is not null)`, product.id);
      await copyRows(src, dst, 'products', 'id = $1', product.id);
      await copyRows(src, dst, 'product_prices', 'product_id = $1', product.id);
      await copyRows(src, dst, 'tax_rates', 'organization_id = $1', product.organization_id);
      if (input.discountId) {
        const n = await copyRows(src, dst, 'discounts', 'id = $1 and organization_id = ' + `'${product.organization_id}'`, input.discountId);
        if (!n) throw new Error(`No discount ${input.discountId} of the product's organization.`);
        await copyRows(src, dst, 'discount_products', 'discount_id = $1', input.discountId).catch(() => 0);
      }
      await src.query('rollback');
    } finally {
      await src.end();
      await dst.end();
    }

    // 2. Temporal's time-skipping server with the real workflows and subscription activities.
    env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: path.join(ROOT, '.venv', 'bin', 'temporal-test-server') } },
    });
    const timeSkipping = env;
    /** The simulated time (the time-skipping server's clock) while an activity runs. */
    const simNow = async () => new Date(await timeSkipping.currentTimeMs()).toISOString();
    const mails: SimMail[] = [];
    const charges: { at: string; orderId: string; outcome: string }[] = [];
    const states: SimStateChange[] = [];
    const seen = new Set<string>();
    const scratch = deps;
    /** The subscription events written since the last look, stamped with the simulated time `at`. */
    const collectStates = async (at: string) => {
      const events = await scratch.orm.em.fork().find(OutboxEvent, { type: { $like: 'subscription.%' } }, { orderBy: { seq: 'asc' } });
      for (const e of events) {
        if (seen.has(e.id)) continue;
        seen.add(e.id);
        const data = e.data as { status: string; current_period_end: string | null };
        states.push({ at, event: e.type, status: data.status, currentPeriodEnd: data.current_period_end });
      }
    };
    const real = createSubscriptionActivities(deps) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const wrapped: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
    for (const [name, fn] of Object.entries(real)) {
      wrapped[name] = async (...args: unknown[]) => {
        const at = await simNow();
        const r = (await fn(...args)) as { paid?: boolean; orderId?: string } | undefined;
        if (name === 'chargeSubscriptionOrder') charges.push({ at, orderId: args[0] as string, outcome: r?.paid ? 'paid' : 'declined' });
        if (name === 'renewAndCharge' && r?.orderId) charges.push({ at, orderId: r.orderId, outcome: r.paid ? 'paid' : 'declined' });
        await collectStates(at);
        return r;
      };
    }
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      workflowsPath: WORKFLOWS_PATH,
      activities: {
        ...wrapped,
        async requestBenefitAction() {},
        async sendNotification(n: { kind: string; recipient: string; subject: string }) {
          mails.push({ at: await simNow(), kind: n.kind, to: n.recipient, subject: n.subject });
        },
      },
    });
    const running = worker.run();
    try {
      // 3. The purchase, at the simulated start (the server's clock).
      const em = deps.orm.em.fork();
      const link = em.create(CheckoutLink, {
        organization: em.getReference(Organization, product.organization_id),
        clientSecret: `polar_cl_${randomBytes(24).toString('hex')}`,
        paymentProcessor: 'stripe',
        label: 'simulation',
        allowDiscountCodes: true,
        discount: input.discountId ? em.getReference(Discount, input.discountId) : null,
        successUrl: null,
        metadata: {},
        productPrice: null,
        deletedAt: null,
      });
      link.products.add(em.getReference(Product, product.id));
      await em.flush();
      const email = `simulated-buyer@example.com`;
      const full = await findCheckoutLinkBySecret(deps.orm.em.fork(), link.clientSecret);
      const cem = deps.orm.em.fork();
      const checkout = await createCheckoutFromLink(cem, full!, { customer_email: email }, { ttlSeconds: 3600 });
      if (!checkout) throw new Error('The product has no live price.');
      await cem.flush();
      await confirmCheckout(
        deps.orm.em.fork(),
        deps,
        checkout.clientSecret,
        checkoutConfirmSchema.parse({
          customer_email: email,
          customer_name: 'Simulated Buyer',
          customer_billing_address: { country: input.country ?? 'US' },
          confirmation_token_id: checkout.isPaymentRequired || checkout.isPaymentSetupRequired ? 'tok_visa' : null,
        }),
      );
      const fulfilled = await fulfilCheckout(deps.orm.em.fork(), deps.integrations, checkout.id, { processor: deps.processor.name, publicUrl: cfg.PUBLIC_URL });
      if (!fulfilled?.subscriptionId) throw new Error('The product is not recurring: nothing to simulate.');
      const subscriptionId = fulfilled.subscriptionId;
      const sub0 = await deps.orm.em.fork().findOneOrFail(Subscription, { id: subscriptionId });
      const startedAt = sub0.startedAt ?? sub0.createdAt;
      // The subscription starts now by the wall clock; the server's clock is moved there.
      const lag = startedAt.getTime() - (await env.currentTimeMs());
      if (lag > 0) await env.sleep(lag);
      const firstOrderAt = new Date(await env.currentTimeMs()).toISOString();
      await collectStates(firstOrderAt);

      if (input.usage?.length) {
        await insertEvents(
          deps.orm.em.fork(),
          input.usage.map((u) => ({
            organizationId: product.organization_id,
            name: u.name,
            timestamp: new Date(startedAt.getTime() + u.day * 86_400_000),
            customerId: fulfilled.customerId,
            metadata: u.metadata,
          })),
          'user',
        );
      }
      const handle = await env.client.workflow.start('subscriptionWorkflow', {
        taskQueue: cfg.TEMPORAL_TASK_QUEUE,
        workflowId: subscriptionWorkflowId(subscriptionId),
        args: [{ subscriptionId }],
      });
      const pm = await deps.orm.em.fork().findOne(PaymentMethod, { customer: fulfilled.customerId });
      const orders = () => deps!.orm.em.fork().find(OrderEntity, { subscription: subscriptionId }, { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
      const row = () => deps!.orm.em.fork().findOneOrFail(Subscription, { id: subscriptionId });
      const ended = (s: Subscription) => s.endedAt != null || s.status === 'canceled' || s.status === 'unpaid';

      // 4. Month after month: skip to the period's end, wait for its renewal to settle.
      for (let k = 1; k <= input.months; k++) {
        const s = await row();
        if (ended(s) || !s.currentPeriodEnd) break;
        if (input.declineAt != null && k === input.declineAt && pm) await setSandboxCardOutcome(deps.orm.em.fork(), pm.processorId, 'charge_fails');
        const before = (await orders()).length;
        const ms = s.currentPeriodEnd.getTime() - (await env.currentTimeMs()) + 60_000;
        if (ms > 0) await env.sleep(ms);
        log(`renewal ${k} of ${input.months}`);
        await until(`renewal ${k}`, async () => {
          const now = await row();
          if (ended(now)) return true;
          const list = await orders();
          const last = list[list.length - 1];
          return list.length > before && last && (last.status === 'paid' || now.status === 'past_due');
        });
      }
      // What happened after the last renewal (dunning retries) up to the horizon settles first.
      await new Promise((r) => setTimeout(r, 500));
      await handle.terminate('simulation done').catch(() => {});

      // 5. The report: orders with the simulated time of their first charge (the purchase: the start).
      const list = await orders();
      const orderAt = new Map<string, string>();
      for (const c of charges) if (!orderAt.has(c.orderId)) orderAt.set(c.orderId, c.at);
      return {
        product: { id: product.id, name: product.name },
        startedAt: firstOrderAt,
        orders: list.map((o, i) => orderOf(o, product.name, i === 0 ? firstOrderAt : (orderAt.get(o.id) ?? firstOrderAt))),
        states,
        mails: mails.filter((m, i) => mails.findIndex((x) => x.kind === m.kind && x.subject === m.subject && x.at === m.at) === i),
        charges: charges.map((c) => ({ at: c.at, orderIndex: list.findIndex((o) => o.id === c.orderId), outcome: c.outcome })),
      };
    } finally {
      worker.shutdown();
      await running;
    }
  } finally {
    await env?.teardown();
    if (deps) await closeDeps(deps);
    await dropDatabase(scratchUrl.toString()).catch(() => {});
  }
}

export function readUsageFile(file: string): UsageEvent[] {
  return parseUsageCsv(readFileSync(file, 'utf8'));
}
