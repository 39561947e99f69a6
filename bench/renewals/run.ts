/**
 * Benchmark (not a test): renewals throughput. N monthly subscriptions whose period ends at the same
 * moment are renewed by their real `subscription:<id>` workflows on the development Temporal server,
 * each with its real activities (cycle order, off-session charge at the sandbox processor, order
 * paid, benefit request, continue-as-new). Prints renewals per second and the total time; asserts
 * nothing.
 *
 *   npx tsx bench/renewals/run.ts [--count 10000] [--lead <seconds>] [--start-concurrency 64] [--keep] [--statements]
 *
 * Also prints per renewal: CPU ms of the worker, PostgreSQL backends and Temporal server, SQL statements
 * (22 now) and history figures (measure.ts).
 *
 * Needs PostgreSQL and Temporal (`npm start`). It never touches the development database: it creates
 * `<database>_bench_renewals` (every migration applied), seeds the subscriptions there directly, runs
 * its own worker on its own task queue against it, terminates the workflows and drops the database
 * at the end (unless --keep).
 *
 * Issue #7's target: 10,000 renewed in under 5 minutes (34/s). Measured on the 2-core machine, otherwise
 * idle (2026-11-24, Temporal dev server with its SQLite file in WAL mode, 23 SQL statements per renewal):
 * 10,000 in 265 s (37.7/s, load average 1.4 at its start) with every renewal continuing as new, as issue
 * #7 asks; 188–221 s (45–53/s) while renewals stayed in one run, 2,000 at 53/s
 * (before the renewal's ORM work was cut, 38 statements: 337–357 s and 28–30/s, 2,000 at 35/s; before
 * that: 2.0/s). CPU-bound, the worker's JavaScript thread saturated: see README "Throughput".
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
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { dropDatabase, ensureDatabase } from '../../infra/src/services.ts';
import { subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import { createWorker } from '../../workers/src/worker.ts';
import { countStatements, cpuSince, cpuSnapshot, historyFigures, loadAverage, machine, printPerRenewal } from './measure.ts';

const N = arg('count', 10_000);
const START_CONCURRENCY = arg('start-concurrency', 64);
const KEEP = process.argv.includes('--keep');
const SHOW_STATEMENTS = process.argv.includes('--statements');
const HISTORY_SAMPLE = arg('history-sample', 50);
/** The progress poll below (`count(*)` of the cycle orders) is the bench's, not the renewals'. */
const statements = countStatements(/^select count\(\*\).* from "orders"/i);
const PRICE = 1999;

async function main() {
  const base = loadConfig();
  const url = new URL(base.DATABASE_URL);
  url.pathname = `${url.pathname}_bench_renewals`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl, { recreate: true });
  const { used, namespace } = await benchNamespace(base);
  const cfg = loadConfig({
    ...process.env,
    TEMPORAL_NAMESPACE: namespace,
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_MAX: '24',
    LOG_LEVEL: 'warn',
    TEMPORAL_TASK_QUEUE: `bench-renewals-${randomUUID().slice(0, 8)}`,
  });
  const deps = await createDeps(cfg, 'bench-renewals');
  await migrate(deps.orm);
  console.log(`renewals benchmark: ${N} subscriptions`);
  console.log(`machine:        ${machine()}`);
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
  console.log(`seeded ${N} subscriptions in ${secs(Date.now() - tSeed)}`);

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
  statements.stop();
  const from = Math.max(renewAt.getTime(), tStarted);
  const renewMs = tDone - from;
  const rolled = await check.count(Subscription, { currentPeriodEnd: periodEnd(renewAt, 'month', startedAt.getUTCDate()), status: 'active' });
  console.log(`renewed:        ${paid} / ${N} orders paid, ${rolled} periods rolled`);
  console.log(`renewal phase:  ${secs(renewMs)} from the common period end (±1 s polling)`);
  console.log(`throughput:     ${(paid / (renewMs / 1000)).toFixed(1)} renewals/s`);
  console.log(`total:          ${secs(tDone - tSeed)} (seed + start + renew)`);
  console.log(`target:         ${N} renewals in under 300 s: ${renewMs < 300_000 && paid === N ? 'met' : 'missed'} (renewal phase ${secs(renewMs)}); load average now ${loadAverage()}`);
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
