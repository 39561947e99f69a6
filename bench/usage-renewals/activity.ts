/**
 * Benchmark (not a test): the renewal activity alone, without Temporal, fixed against metered. N
 * subscriptions of a fixed-price product and N of a fixed + metered product (E / N events each in the
 * period) are renewed and charged by `renewAndChargeSubscription` (what the workflow's renewAndCharge
 * local activity runs), alternating one of each, one at a time, in this process. Prints per renewal:
 * CPU ms of this process and of its PostgreSQL backend, and SQL statements. Alternating keeps both
 * kinds under the same machine load, so their difference holds on a busy machine.
 *
 *   npx tsx bench/usage-renewals/activity.ts [--count 300] [--events 30000] [--statements] [--orm-path]
 *
 * `--orm-path`: the ORM path only (renewal.ts, charging.ts), not the plain-SQL common case (renewal-sql.ts).
 *
 * Uses its own database `<database>_bench_renewal_activity`, dropped at the end.
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../api/src/config.ts';
import { closeDeps, createDeps } from '../../api/src/deps.ts';
import { migrate } from '../../api/src/kit/db.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { Meter } from '../../api/src/modules/meters/entities.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { SandboxCustomer, SandboxPaymentMethod } from '../../api/src/modules/payments/sandbox-entities.ts';
import { Product, ProductPrice } from '../../api/src/modules/products/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { renewAndChargeSubscription } from '../../api/src/modules/subscriptions/service.ts';
import { setPlainSqlRenewals } from '../../api/src/modules/subscriptions/renewal-sql.ts';
import { dropDatabase, ensureDatabase } from '../../infra/src/services.ts';
import { arg } from '../common.ts';
import { backendPids, countStatements, machine, procCpuMs } from '../renewals/measure.ts';

const N = arg('count', 300);
const E = arg('events', 30_000);
const statements = countStatements(/^$/);

async function main() {
  const base = loadConfig();
  const url = new URL(base.DATABASE_URL);
  url.pathname = `${url.pathname}_bench_renewal_activity`;
  await ensureDatabase(url.toString(), { recreate: true });
  const cfg = loadConfig({ ...process.env, DATABASE_URL: url.toString(), DATABASE_POOL_MAX: '2', LOG_LEVEL: 'warn' });
  const deps = await createDeps(cfg, 'bench-renewal-activity');
  setPlainSqlRenewals(!process.argv.includes('--orm-path'));
  await migrate(deps.orm);
  console.log(`renewal activity benchmark: ${N} fixed and ${N} metered renewals, ${E} events`);
  console.log(`machine:        ${machine()}`);
  console.log(`renewal path:   ${process.argv.includes('--orm-path') ? 'ORM (--orm-path)' : 'plain SQL, ORM for the rest'}`);
  const em = deps.orm.em.fork();
  const org = em.create(Organization, { name: 'Bench', slug: `bench-${randomUUID().slice(0, 8)}`, socials: [], featureSettings: {}, subscriptionSettings: {}, metadata: {} });
  const meter = em.create(Meter, {
    organization: org, name: 'API calls', metadata: {},
    filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api_call' }] },
    aggregation: { func: 'sum', property: 'units' },
  });
  const fixedPrice = (product: Product) =>
    em.create(ProductPrice, {
      product, amountType: 'fixed', priceCurrency: 'usd', priceAmount: 1999,
      minimumAmount: null, maximumAmount: null, presetAmount: null, meter: null, unitAmount: null, capAmount: null, isArchived: false,
    });
  const fixedProduct = em.create(Product, { organization: org, name: 'Fixed', description: null, recurringInterval: 'month', isArchived: false, metadata: {} });
  const meteredProduct = em.create(Product, { organization: org, name: 'Metered', description: null, recurringInterval: 'month', isArchived: false, metadata: {} });
  const prices = { fixed: fixedPrice(fixedProduct), metered: fixedPrice(meteredProduct) };
  em.create(ProductPrice, {
    product: meteredProduct, amountType: 'metered_unit', priceCurrency: 'usd', priceAmount: null,
    minimumAmount: null, maximumAmount: null, presetAmount: null, meter, unitAmount: '0.5', capAmount: 100_000, isArchived: false,
  });
  await em.flush();
  const startedAt = new Date(Date.now() - 30 * 86_400_000);
  const periodEnd = new Date(Date.now() - 60_000);
  const ids = { fixed: [] as string[], metered: [] as string[] };
  for (const kind of ['fixed', 'metered'] as const) {
    const batch = deps.orm.em.fork();
    for (let j = 0; j < N; j++) {
      const email = `${kind}-${j}@example.com`;
      const sc = batch.create(SandboxCustomer, { id: `cus_${kind}${j}`, email, name: null, idempotencyKey: `${kind}:${j}` });
      const spm = batch.create(SandboxPaymentMethod, {
        id: `pm_${kind}${j}`, customerId: sc.id, brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, outcome: 'succeed', idempotencyKey: null, detachedAt: null,
      });
      const customer = batch.create(Customer, { organization: org.id, email, name: null, metadata: {}, processorCustomerId: sc.id, billingAddress: null });
      const pm = batch.create(PaymentMethod, {
        customer, processor: 'sandbox', processorId: spm.id, brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, wallet: null, isDefault: true, deletedAt: null,
      });
      const s = batch.create(Subscription, {
        organization: org.id, customer, product: kind === 'fixed' ? fixedProduct.id : meteredProduct.id, price: prices[kind].id, discount: null, checkout: null,
        amount: 1999, currency: 'usd', recurringInterval: 'month', status: 'active',
        currentPeriodStart: startedAt, currentPeriodEnd: periodEnd, cancelAtPeriodEnd: false, canceledAt: null,
        startedAt, endsAt: null, endedAt: null, customerCancellationReason: null, customerCancellationComment: null,
        paymentMethod: pm, metadata: {},
      });
      ids[kind].push(s.id);
    }
    await batch.flush();
  }
  await deps.orm.em.fork().execute(
    `insert into events (id, created_at, "timestamp", name, source, organization_id, customer_id, external_customer_id, metadata)
     select gen_random_uuid(), now() - interval '1 minute', ?::timestamptz + random() * interval '29 days', 'api_call', 'user', s.organization_id, s.customer_id, null,
            jsonb_build_object('units', 1 + (g % 10))
       from subscriptions s cross join generate_series(1, ?) g where s.product_id = ?`,
    [startedAt.toISOString(), Math.ceil(E / N), meteredProduct.id],
  );
  await deps.orm.em.fork().execute('vacuum (analyze) events');

  const spent = { fixed: { cpu: 0, pg: 0, sql: 0 }, metered: { cpu: 0, pg: 0, sql: 0 } };
  const database = url.pathname.slice(1);
  const settle = { settleMs: 10_000 };
  statements.reset();
  let pids: number[] = [];
  const pgMs = () => pids.reduce((t, p) => t + (procCpuMs(p) ?? 0), 0);
  // One warm-up renewal of each kind (module loading, first plans, the pool's connections), not counted.
  for (let i = 0; i < N; i++) {
    if (i === 1) pids = backendPids(database);
    for (const kind of ['fixed', 'metered'] as const) {
      const pg0 = pgMs();
      const sql0 = statements.total();
      const cpu0 = process.cpuUsage();
      const r = await renewAndChargeSubscription(deps.orm.em.fork(), deps.processor, ids[kind][i]!, periodEnd.toISOString(), settle);
      const cpu = process.cpuUsage(cpu0);
      if (r.outcome !== 'charge' || !r.paid) throw new Error(`${kind} renewal ${i}: ${JSON.stringify(r)}`);
      if (i === 0) continue;
      spent[kind].cpu += (cpu.user + cpu.system) / 1000;
      spent[kind].pg += pgMs() - pg0;
      spent[kind].sql += statements.total() - sql0;
    }
  }
  const per = (x: number) => (x / (N - 1)).toFixed(2);
  for (const kind of ['fixed', 'metered'] as const) {
    console.log(`${kind.padEnd(8)} per renewal: ${per(spent[kind].cpu)} ms CPU this process, ${per(spent[kind].pg)} ms its PostgreSQL backends, ${per(spent[kind].sql)} statements`);
  }
  if (process.argv.includes('--statements')) {
    for (const [t, n] of [...statements.byText()].sort((a, b) => b[1] - a[1])) console.log(`  ${n.toString().padStart(6)}  ${t.slice(0, 160)}`);
  }
  await closeDeps(deps);
  await dropDatabase(url.toString());
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
