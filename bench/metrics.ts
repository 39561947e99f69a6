/**
 * Benchmark (not a test): GET /v1/metrics/'s statement over `--orders` paid orders (default
 * 1,000,000 over the last 30 days, 100 customers, a tenth as many subscriptions: the shape of
 * bench/ingest.ts's metrics step), from the 15-minute aggregates and, as the in-run reference, from
 * the rows; and what the aggregates' triggers cost an order insert.
 *
 *   npm run bench:metrics -- [--orders 1000000] [--runs 200]
 *
 * Works in a database of its own (emporia_bench_metrics, dropped at the end). The bulk seed is
 * written with the triggers off (session_replication_role = replica, which also skips the foreign
 * keys: no parent rows are needed) and the aggregates rebuilt once by metrics_rebuild(). Prints per
 * request p50/p95/p99 wall time and the CPU milliseconds of the PostgreSQL backend (read from
 * /proc: PostgreSQL runs on this machine) and of this process, with the load average beside them.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { loadConfig } from '../api/src/config.ts';
import { initOrm, migrate } from '../api/src/kit/db.ts';
import { allEntities } from '../api/src/modules/entities.ts';
import { computeMetricsFromBuckets, computeMetricsFromRows, type MetricsQuery } from '../api/src/modules/metrics/service.ts';
import { dropDatabase, ensureDatabase } from '../infra/src/services.ts';
import { arg } from './common.ts';
import { seedMetricsRows } from './metrics-seed.ts';

const ORDERS = arg('orders', 1_000_000);
const RUNS = arg('runs', 200);
const CUSTOMERS = 100;
const DAY = 86_400_000;

const base = loadConfig();
const url = new URL(base.DATABASE_URL);
url.pathname = '/emporia_bench_metrics';
const dbUrl = url.toString();
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const ms = (v: number) => `${v.toFixed(1)} ms`;

/** User+system CPU of a process in milliseconds (Linux /proc, clock ticks of 10 ms). */
function procCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main() {
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model}; ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; load ${load()}`);
  await ensureDatabase(dbUrl, { recreate: true });
  const orm = await initOrm({ DATABASE_URL: dbUrl, DATABASE_POOL_MAX: 2 }, allEntities);
  await migrate(orm);
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const org = '00000000-0000-4000-8000-000000000001';
    const product = '00000000-0000-4000-8000-000000000002';
    const price = '00000000-0000-4000-8000-000000000003';
    const customers = Array.from({ length: CUSTOMERS }, (_, i) => `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`);
    const subs = Math.max(1, Math.floor(ORDERS / 10));
    let t = performance.now();
    await db.query('set session_replication_role = replica');
    const subIds = await seedMetricsRows(db, { orders: ORDERS, organizationId: org, customers, productId: product, priceId: price });
    console.log(`seed: ${ORDERS.toLocaleString('en')} orders, ${subs.toLocaleString('en')} subscriptions in ${((performance.now() - t) / 1000).toFixed(0)} s`);
    t = performance.now();
    await db.query('select metrics_rebuild()');
    await db.query('analyze orders; analyze subscriptions; analyze metrics_order_buckets; analyze metrics_subscription_buckets');
    const sizes = (
      await db.query<{ orders: string; buckets: string; day: string; subs: string }>(
        `select (select count(*) from metrics_order_facts) as orders, (select count(*) from metrics_order_buckets) as buckets,
                (select count(*) from metrics_order_buckets where class = 0) as day, (select count(*) from metrics_subscription_buckets) as subs`,
      )
    ).rows[0]!;
    console.log(
      `aggregates rebuilt in ${((performance.now() - t) / 1000).toFixed(0)} s: ${sizes.orders} order facts, ${sizes.buckets} order bucket rows (${sizes.day} of the hour/day class), ${sizes.subs} subscription bucket rows`,
    );

    // What the triggers add to an order insert: single-row inserts of renewals, triggers off then on.
    const pid = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const insertCost = async (n: number) => {
      const before = procCpuMs(pid);
      const started = performance.now();
      for (let i = 0; i < n; i++) {
        await db.query(
          `insert into orders (id, created_at, organization_id, customer_id, product_id, product_price_id, subscription_id, status,
             billing_reason, subtotal_amount, discount_amount, net_amount, tax_amount, total_amount, currency, custom_field_data, metadata)
           values (gen_random_uuid(), now(), $1, $2, $3, $4, $5, 'paid', 'subscription_cycle', 1000, 0, 1000, 0, 1000, 'usd', '{}', '{}')`,
          [org, customers[i % CUSTOMERS], product, price, subIds[i % subIds.length]],
        );
      }
      return { cpu: (procCpuMs(pid) - before) / n, wall: (performance.now() - started) / n };
    };
    // In a transaction rolled back at the end: the answers compared below are over the seed only.
    const INSERTS = 2000;
    await db.query('begin');
    const off = await insertCost(INSERTS);
    await db.query('alter table orders enable always trigger orders_metrics_insert_delete');
    // A deferred constraint trigger: fired after each insert here, not at the commit this transaction never reaches.
    await db.query('set constraints orders_metrics_insert_delete immediate');
    const on = await insertCost(INSERTS);
    await db.query('rollback');
    await db.query('set session_replication_role = origin');
    console.log(
      `order insert (${INSERTS} single-row renewals each): without the trigger ${off.cpu.toFixed(3)} ms backend CPU, ${off.wall.toFixed(3)} ms wall; ` +
        `with it ${on.cpu.toFixed(3)} ms CPU, ${on.wall.toFixed(3)} ms wall (load ${load()})`,
    );

    const endDate = new Date().toISOString().slice(0, 10);
    const startDate = new Date(Date.now() - 30 * DAY).toISOString().slice(0, 10);
    const query = (extra: Partial<MetricsQuery>): MetricsQuery => ({
      startDate,
      endDate,
      interval: 'day',
      timezone: 'UTC',
      organizationIds: [org],
      ...extra,
    });
    const em = orm.em.fork();
    const emPid = (await em.getConnection().execute<{ pid: number }[]>('select pg_backend_pid() as pid'))[0]!.pid;
    const measure = async (label: string, runs: number, fn: () => Promise<unknown>) => {
      await fn();
      const walls: number[] = [];
      const pgBefore = procCpuMs(emPid);
      const nodeBefore = process.cpuUsage();
      for (let i = 0; i < runs; i++) {
        const s = performance.now();
        await fn();
        walls.push(performance.now() - s);
      }
      const node = process.cpuUsage(nodeBefore);
      walls.sort((a, b) => a - b);
      console.log(
        `  ${label.padEnd(44)} p50 ${ms(pct(walls, 50))}, p95 ${ms(pct(walls, 95))}, p99 ${ms(pct(walls, 99))}; ` +
          `CPU/request: PostgreSQL ${((procCpuMs(emPid) - pgBefore) / runs).toFixed(1)} ms, node ${((node.user + node.system) / 1000 / runs).toFixed(1)} ms (${runs} runs, load ${load()})`,
      );
    };
    console.log(`\nmetrics statement, 31 daily periods ${startDate} to ${endDate}, 12 figures:`);
    const same = async (q: MetricsQuery) =>
      JSON.stringify(await computeMetricsFromBuckets(em, q)) === JSON.stringify(await computeMetricsFromRows(em, q));
    for (const [label, q] of [
      ['all customers, UTC', query({})],
      ['all customers, Asia/Kolkata', query({ timezone: 'Asia/Kolkata' })],
      ['all customers, the product', query({ productIds: [product] })],
    ] as const) {
      await measure(`${label}: aggregates`, RUNS, () => computeMetricsFromBuckets(em, q));
      await measure(`${label}: rows (reference)`, Math.max(3, Math.ceil(RUNS / 20)), () => computeMetricsFromRows(em, q));
      console.log(`  answers ${(await same(q)) ? 'identical' : 'DIFFER'}`);
    }
    await measure('one customer: rows (what a customer filter uses)', RUNS, () => computeMetricsFromRows(em, query({ customerIds: [customers[0]!] })));
    for (const [interval, days] of [['week', 180], ['month', 365]] as const) {
      const q = query({ interval, startDate: new Date(Date.now() - days * DAY).toISOString().slice(0, 10) });
      await measure(`all customers, ${interval}s over ${days} days: aggregates`, Math.ceil(RUNS / 4), () => computeMetricsFromBuckets(em, q));
      console.log(`  answers ${(await same(q)) ? 'identical' : 'DIFFER'}`);
    }
  } finally {
    await db.end();
    await orm.close();
    await dropDatabase(dbUrl).catch(() => undefined);
  }
}

await main();
