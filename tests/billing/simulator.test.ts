/**
 * The billing simulator (`npm run simulate`): for a fixed scenario — a fixed + metered product with a
 * repeating discount and tax, a usage CSV, a card that declines from the third renewal — the orders it
 * prints equal the orders the real stack writes for the same scenario (the checkout through a link,
 * the subscription workflow and its activities on the time-skipping server, the same events), and
 * it writes nothing into the database it reads the product from.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutLink } from '../../api/src/modules/checkout-links/entities.ts';
import { Discount } from '../../api/src/modules/discounts/entities.ts';
import { insertEvents } from '../../api/src/modules/events/service.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { setSandboxCardOutcome } from '../../api/src/modules/payments/sandbox.ts';
import { Product } from '../../api/src/modules/products/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { formatOrder, orderOf, parseUsageCsv } from '../../infra/src/simulate-engine.ts';
import { ROOT } from '../../infra/src/services.ts';
import { ordersOf, skipTo, startWorkflow, subscriptionRow, until, type Lifecycle } from '../subscriptions/lifecycle-helpers.ts';
import { seedMetered, startBilling, type MeteredSeed } from './helpers.ts';
import { buyThroughLink } from './trial-helpers.ts';

const run = promisify(execFile);
const CSV = ['day,name,units', '1,api_call,100', '10.5,api_call,250', '20,page_view,9', '35,api_call,4000', '40,api_call,30', '70,api_call,12'].join('\n');
const MONTHS = 3;
const DECLINE_AT = 3;

let lc: Lifecycle;
let running: Promise<void>;
let seed: MeteredSeed;
let discountId: string;

beforeAll(async () => {
  lc = await startBilling();
  running = lc.worker.run();
  seed = await seedMetered(lc, {
    startedAt: new Date(),
    fixedAmount: 2000,
    unitAmount: '0.5',
    capAmount: 1500,
    discount: { basisPoints: 1000, months: 2 },
    tax: { country: 'DE', basisPoints: 1900 },
  });
  const em = lc.deps.orm.em.fork();
  discountId = (await em.findOneOrFail(Subscription, { id: seed.subscriptionId })).discount!.id;
});
afterAll(async () => {
  lc?.worker.shutdown();
  await running;
  await lc?.close();
});

/** Row counts of the tables a simulation would write to, in the source database. */
async function sourceCounts() {
  const [row] = await lc.deps.orm.em.fork().execute<Record<string, string>[]>(
    `select (select count(*) from orders) as orders, (select count(*) from subscriptions) as subscriptions,
            (select count(*) from customers) as customers, (select count(*) from events) as events,
            (select count(*) from checkouts) as checkouts, (select count(*) from outbox_events) as outbox,
            (select count(*) from products) as products, (select count(*) from organizations) as organizations`,
  );
  return row;
}

/** The real stack for the same scenario: a buyer checks the product out through a link, the workflow renews it. */
async function realOrders(): Promise<string[]> {
  const em = lc.deps.orm.em.fork();
  const link = em.create(CheckoutLink, {
    organization: em.getReference(Organization, seed.orgId),
    clientSecret: `polar_cl_real${Date.now()}`,
    paymentProcessor: 'stripe',
    label: null,
    allowDiscountCodes: true,
    discount: em.getReference(Discount, discountId),
    successUrl: null,
    metadata: {},
    productPrice: null,
    deletedAt: null,
  });
  const product = await em.findOneOrFail(Product, { organization: seed.orgId });
  link.products.add(product);
  await em.flush();
  // The buyer is in Germany (the organization's tax rate), as the simulation's --country DE.
  const bought = await buyThroughLink(lc, link.clientSecret, 'real-buyer@example.com', 'tok_visa', 'DE');
  const sub = await subscriptionRow(lc, bought.subscriptionId!);
  const startedAt = sub.startedAt!;
  await insertEvents(
    lc.deps.orm.em.fork(),
    parseUsageCsv(CSV).map((u) => ({
      organizationId: seed.orgId,
      name: u.name,
      timestamp: new Date(startedAt.getTime() + u.day * 86_400_000),
      customerId: bought.customerId,
      metadata: u.metadata,
    })),
    'user',
  );
  const handle = await startWorkflow(lc, bought.subscriptionId!);
  const pm = await lc.deps.orm.em.fork().findOneOrFail(PaymentMethod, { customer: bought.customerId });
  for (let k = 1; k <= MONTHS; k++) {
    if (k === DECLINE_AT) await setSandboxCardOutcome(lc.deps.orm.em.fork(), pm.processorId, 'charge_fails');
    const s = await subscriptionRow(lc, bought.subscriptionId!);
    await skipTo(lc, s.currentPeriodEnd!);
    await until(async () => {
      const list = await ordersOf(lc, bought.subscriptionId!);
      const now = await subscriptionRow(lc, bought.subscriptionId!);
      return list.length === k + 1 && (list[k]!.status === 'paid' || now.status === 'past_due');
    });
  }
  await handle.terminate('test done');
  const orders = await ordersOf(lc, bought.subscriptionId!);
  return orders.flatMap((o) => formatOrder(orderOf(o, product.name, '')));
}

describe('the billing simulator', () => {
  it('prints the orders the real stack writes for the same scenario, and writes nothing to the source database', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'simulate-'));
    const csv = path.join(dir, 'events.csv');
    writeFileSync(csv, CSV);
    const before = await sourceCounts();
    const { stdout } = await run(
      path.join(ROOT, 'node_modules', '.bin', 'tsx'),
      [
        path.join(ROOT, 'infra', 'src', 'simulate.ts'),
        '--product', (await lc.deps.orm.em.fork().findOneOrFail(Product, { organization: seed.orgId })).id,
        '--months', String(MONTHS),
        '--usage', csv,
        '--decline-at', String(DECLINE_AT),
        '--country', 'DE',
        '--discount', discountId,
      ],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: lc.deps.cfg.DATABASE_URL }, timeout: 240_000, maxBuffer: 10 * 1024 * 1024 },
    );
    expect(await sourceCounts()).toEqual(before);

    const lines = stdout.split('\n');
    const printed = lines.flatMap((l) => {
      const head = /^\d{4}-\d{2}-\d{2} {2}(order .*)$/.exec(l);
      if (head) return [head[1]!];
      const item = /^ {12}( {2}.*)$/.exec(l);
      return item ? [item[1]!] : [];
    });
    // Four orders: the purchase and three renewals (the third declined), each with its price and usage lines.
    expect(printed.filter((l) => l.startsWith('order '))).toHaveLength(1 + MONTHS);
    expect(printed[0]).toMatch(/^order subscription_create paid/);
    expect(printed.filter((l) => l.startsWith('order ')).at(-1)).toMatch(/^order subscription_cycle pending/);
    expect(stdout).toMatch(/subscription\.updated: past_due/);
    expect(stdout).toMatch(/mail \S+ to \S+: .*Payment failed/);

    expect(printed).toEqual(await realOrders());
  }, 300_000);
});
