/**
 * Benchmark (not a test): metered renewals. N monthly subscriptions of a product with a fixed price and a
 * `metered_unit` price (sum of `units` over `api_call` events, 0.5 per unit, capped), E usage events in
 * their current period (E / N per customer), all periods ending at the same moment, renewed by their real
 * `subscription:<id>` workflows on the development Temporal server with the real activities (usage
 * aggregated per subscription and meter, metered line, cycle order, off-session charge, order paid).
 * Prints renewals per second and the meter-aggregation share; asserts nothing.
 *
 *   npx tsx bench/usage-renewals/run.ts [--count 10000] [--events 1000000] [--lead <seconds>] [--keep]
 *     [--statements] [--cpu-profile <file>] [--history-sample 50] [--orm-path]
 *
 * Also prints per renewal: CPU ms of the worker, PostgreSQL backends and Temporal server, SQL statements
 * and history figures (bench/renewals/measure.ts), and whether 10,000-in-300-s was met.
 *
 * The meter-aggregation share: before the renewals, the aggregation each renewal runs (meterFigures:
 * usage not billed yet, credited and consumed credits, the one statement quoteUsage sends) is run once
 * for every subscription on the same connection pool; its time over the renewal phase's time is the share.
 *
 * Needs PostgreSQL and Temporal (`npm start`). It never touches the development database: it creates
 * `<database>_bench_usage_renewals`, seeds there, runs its own worker on its own task queue and Temporal
 * namespace, and drops both at the end (unless --keep). Figures: docs/performance.md.
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../api/src/config.ts';
import { deleteNamespace } from '../../infra/src/temporal-housekeeping.ts';
import { arg, benchNamespace, pool, secs } from '../common.ts';
import { closeDeps, createDeps } from '../../api/src/deps.ts';
import { migrate } from '../../api/src/kit/db.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { Order } from '../../api/src/modules/orders/entities.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { SandboxCustomer, SandboxPaymentMethod } from '../../api/src/modules/payments/sandbox-entities.ts';
import { periodEnd } from '../../api/src/modules/pricing/index.ts';
import { Product, ProductPrice } from '../../api/src/modules/products/entities.ts';
import { Meter } from '../../api/src/modules/meters/entities.ts';
import { meterFigures } from '../../api/src/modules/usage/service.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { setPlainSqlRenewals } from '../../api/src/modules/subscriptions/renewal-sql.ts';
import { dropDatabase, ensureDatabase } from '../../infra/src/services.ts';
import { subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import { createWorker } from '../../workers/src/worker.ts';
import { countStatements, cpuSince, cpuSnapshot, historyFigures, loadAverage, machine, printPerRenewal, startProfile } from '../renewals/measure.ts';

const N = arg('count', 10_000);
const E = arg('events', 1_000_000);
const START_CONCURRENCY = arg('start-concurrency', 64);
const KEEP = process.argv.includes('--keep');
/** The renewal activity's ORM path instead of its plain-SQL common case (an A/B under the same load). */
const ORM_PATH = process.argv.includes('--orm-path');
const SHOW_STATEMENTS = process.argv.includes('--statements');
const HISTORY_SAMPLE = arg('history-sample', 50);
/** The progress poll below (`count(*)` of the cycle orders) is the bench's, not the renewals'. */
const statements = countStatements(/^select count\(\*\).* from "orders"/i);
const PRICE = 1999;

async function main() {
  const base = loadConfig();
  const url = new URL(base.DATABASE_URL);
  url.pathname = `${url.pathname}_bench_usage_renewals`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl, { recreate: true });
  const { used, namespace } = await benchNamespace(base);
  const cfg = loadConfig({
    ...process.env,
    TEMPORAL_NAMESPACE: namespace,
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_MAX: '24',
    LOG_LEVEL: 'warn',
    TEMPORAL_TASK_QUEUE: `bench-usage-renewals-${randomUUID().slice(0, 8)}`,
  });
  const deps = await createDeps(cfg, 'bench-usage-renewals');
  setPlainSqlRenewals(!ORM_PATH);
  await migrate(deps.orm);
  console.log(`usage renewals benchmark: ${N} metered subscriptions, ${E} events`);
  console.log(`machine:        ${machine()}`);
  console.log(`renewal path:   ${ORM_PATH ? 'ORM (--orm-path)' : 'plain SQL (renewal-sql.ts), ORM for the rest'}`);
  console.log(`stack before:   ${used}`);

  // ---- seed -------------------------------------------------------------------------------------
  const tSeed = Date.now();
  const em = deps.orm.em.fork();
  const org = em.create(Organization, { name: 'Bench', slug: `bench-${randomUUID().slice(0, 8)}`, socials: [], featureSettings: {}, subscriptionSettings: {}, metadata: {} });
  const product = em.create(Product, { organization: org, name: 'Monthly', description: null, recurringInterval: 'month', isArchived: false, metadata: {} });
  const price = em.create(ProductPrice, {
    product, amountType: 'fixed', priceCurrency: 'usd', priceAmount: PRICE,
    minimumAmount: null, maximumAmount: null, presetAmount: null, meter: null, unitAmount: null, capAmount: null, isArchived: false,
  });
  const meter = em.create(Meter, {
    organization: org,
    name: 'API calls',
    filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api_call' }] },
    aggregation: { func: 'sum', property: 'units' },
    metadata: {},
  });
  em.create(ProductPrice, {
    product, amountType: 'metered_unit', priceCurrency: 'usd', priceAmount: null,
    minimumAmount: null, maximumAmount: null, presetAmount: null, meter, unitAmount: '0.5', capAmount: 100_000, isArchived: false,
  });
  await em.flush();
  // Every period ends together, once the workflows have had time to start (`--lead` seconds; by default
  // 20 s + 12 ms per workflow: a start takes about 4 ms here; a start phase that outlasts it is reported).
  const startedAt = new Date(Date.now() - 30 * 86_400_000);
  const renewAt = new Date(Date.now() + arg('lead', Math.round(20 + N * 0.012)) * 1000);
  const ids: string[] = [];
  for (let i = 0; i < N; i += 1000) {
    const batch = deps.orm.em.fork();
    for (let j = i; j < Math.min(N, i + 1000); j++) {
      const email = `bench-${j}@example.com`;
      const sc = batch.create(SandboxCustomer, { id: `cus_bench${j}`, email, name: null, idempotencyKey: `bench:${j}` });
      const spm = batch.create(SandboxPaymentMethod, {
        id: `pm_bench${j}`, customerId: sc.id, brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, outcome: 'succeed', idempotencyKey: null, detachedAt: null,
      });
      const customer = batch.create(Customer, { organization: org.id, email, name: null, metadata: {}, processorCustomerId: sc.id, billingAddress: null });
      const pm = batch.create(PaymentMethod, {
        customer, processor: 'sandbox', processorId: spm.id, brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, wallet: null, isDefault: true, deletedAt: null,
      });
      const s = batch.create(Subscription, {
        organization: org.id, customer, product: product.id, price: price.id, discount: null, checkout: null,
        amount: PRICE, currency: 'usd', recurringInterval: 'month', status: 'active',
        currentPeriodStart: startedAt, currentPeriodEnd: renewAt, cancelAtPeriodEnd: false, canceledAt: null,
        startedAt, endsAt: null, endedAt: null, customerCancellationReason: null, customerCancellationComment: null,
        paymentMethod: pm, metadata: {},
      });
      ids.push(s.id);
    }
    await batch.flush();
  }
  // E events spread over the customers and the current period, ingested a minute ago.
  const tEvents = Date.now();
  const perCustomer = Math.ceil(E / N);
  await deps.orm.em.fork().execute(
    `insert into events (id, created_at, "timestamp", name, source, organization_id, customer_id, external_customer_id, metadata)
     select gen_random_uuid(), now() - interval '1 minute', ?::timestamptz + random() * (now() - interval '2 minutes' - ?::timestamptz),
            'api_call', 'user', c.organization_id, c.id, null, jsonb_build_object('units', 1 + (g % 10))
       from customers c cross join generate_series(1, ?) g
      where c.organization_id = ?
      limit ?`,
    [startedAt.toISOString(), startedAt.toISOString(), perCustomer, org.id, E],
  );
  // Vacuumed now, so autovacuum does not work through a million fresh rows during the renewal phase.
  await deps.orm.em.fork().execute('vacuum (analyze) events');
  console.log(`seeded ${N} subscriptions in ${secs(tEvents - tSeed)}, ${E} events in ${secs(Date.now() - tEvents)}`);

  // The aggregation alone, as each renewal runs it, for every subscription (same pool, same concurrency as the worker's activities).
  const tAgg = Date.now();
  const meterRow = await deps.orm.em.fork().findOneOrFail(Meter, { id: meter.id });
  const subs = (await deps.orm.em.fork().find(Subscription, { id: { $in: ids } }, { fields: ['customer'] })).map((s) => ({ id: s.id, customerId: s.customer.id }));
  let aggregated = 0;
  await pool(subs, 20, async (s) => {
    const { figures } = await meterFigures(deps.orm.em.fork(), {
      organizationId: org.id,
      subscriptionId: s.id,
      customer: { id: s.customerId, externalId: null },
      meters: [meterRow],
      periodStart: startedAt,
      periodEnd: renewAt,
      billedThrough: { settleMs: 10_000 },
    });
    aggregated += Number(figures[0]!.usage);
  });
  const aggMs = Date.now() - tAgg;
  console.log(`aggregation:    ${secs(aggMs)} for ${N} subscriptions (${(N / (aggMs / 1000)).toFixed(0)}/s), ${aggregated} units in all`);

  // ---- run ----------------------------------------------------------------------------------------
  const worker = await createWorker(deps);
  const running = worker.run();
  const tStart = Date.now();
  const sampleEvery = Math.max(1, Math.floor(N / HISTORY_SAMPLE));
  const sampled: { workflowId: string; runId: string }[] = [];
  let nth = 0;
  await pool(ids, START_CONCURRENCY, async (subscriptionId) => {
    const i = nth++;
    const h = await deps.temporal.workflow.start('subscriptionWorkflow', {
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      workflowId: subscriptionWorkflowId(subscriptionId),
      args: [{ subscriptionId }],
    });
    if (i % sampleEvery === 0 && sampled.length < HISTORY_SAMPLE) sampled.push({ workflowId: h.workflowId, runId: h.firstExecutionRunId });
  });
  const tStarted = Date.now();
  console.log(`started ${N} workflows in ${secs(tStarted - tStart)}; periods end at ${renewAt.toISOString()}`);
  if (tStarted > renewAt.getTime()) console.log('  (starting outlasted --lead: some renewals ran while workflows were still starting)');
  // The per-renewal figures cover the renewal phase only (from the common period end).
  if (Date.now() < renewAt.getTime()) await new Promise((r) => setTimeout(r, renewAt.getTime() - Date.now()));
  const database = url.pathname.slice(1);
  const cpu0 = cpuSnapshot(database);
  statements.reset();
  const stopProfile = await startProfile();

  const check = deps.orm.em.fork();
  let paid = 0;
  let last = -1;
  // Gives up 15 minutes after the common period end, or after 2 minutes without a renewal once it passed.
  let lastProgress = Math.max(Date.now(), renewAt.getTime());
  const deadline = Math.max(Date.now(), renewAt.getTime()) + 15 * 60_000;
  while (paid < N && Date.now() < deadline && Date.now() - lastProgress < 120_000) {
    await new Promise((r) => setTimeout(r, 1000));
    paid = await check.count(Order, { billingReason: 'subscription_cycle', status: 'paid' });
    if (paid !== last) {
      last = paid;
      lastProgress = Date.now();
      if (Date.now() >= renewAt.getTime()) console.log(`  ${secs(Date.now() - renewAt.getTime())}: ${paid} / ${N} renewed`);
    }
  }
  const tDone = Date.now();
  const cpu = cpuSince(cpu0, database);
  const mem = process.memoryUsage();
  statements.stop();
  await stopProfile?.(paid);
  const from = Math.max(renewAt.getTime(), tStarted);
  const renewMs = tDone - from;
  const rolled = await check.count(Subscription, { currentPeriodEnd: periodEnd(renewAt, 'month', startedAt.getUTCDate()), status: 'active' });
  console.log(`renewed:        ${paid} / ${N} orders paid, ${rolled} periods rolled`);
  console.log(`renewal phase:  ${secs(renewMs)} from the common period end (±1 s polling)`);
  console.log(`throughput:     ${(paid / (renewMs / 1000)).toFixed(1)} renewals/s`);
  console.log(`aggregation share: ${((100 * aggMs) / renewMs).toFixed(1)}% of the renewal phase (aggregation pass alone / renewal phase)`);
  const [billed] = await check.execute<{ n: string; units: string | null }[]>(`select count(*) as n, sum(usage) as units from metered_billings`);
  console.log(`metered lines:  ${billed?.n} recorded, ${billed?.units} units billed (events seeded: ${aggregated} units)`);
  console.log(`total:          ${secs(tDone - tSeed)} (seed + start + renew)`);
  console.log(`target:         ${N} renewals in under 300 s: ${renewMs < 300_000 && paid === N ? 'met' : 'missed'} (renewal phase ${secs(renewMs)}); load average now ${loadAverage()}`);
  console.log(`worker memory:  rss ${(mem.rss / 2 ** 20).toFixed(0)} MB, heap used ${(mem.heapUsed / 2 ** 20).toFixed(0)} MB at the end of the renewal phase`);
  printPerRenewal(paid, cpu, statements, await historyFigures(deps.temporal, sampled), { showStatements: SHOW_STATEMENTS });

  // ---- clean up -------------------------------------------------------------------------------------
  worker.shutdown();
  await running;
  await closeDeps(deps);
  await deleteNamespace(base.TEMPORAL_ADDRESS, namespace);
  if (!KEEP) await dropDatabase(databaseUrl);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
