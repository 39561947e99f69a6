/**
 * Benchmark (not a test): GET /v1/metrics/ over `--orders` paid orders (default 1,000,000 over the
 * last 30 days, 100 customers with the same share each, a tenth as many subscriptions: the shape of
 * bench/ingest.ts's metrics step), for all customers and for one, from the 15-minute aggregates and,
 * as the in-run reference, from the rows; and what the aggregates' triggers cost an order insert.
 *
 *   npm run bench:metrics -- [--orders 1000000] [--runs 200] [--keep] [--compare-all]
 *   npm run bench:metrics -- --orders 10000000 --runs 100
 *
 * Above 2,000,000 orders the all-customer questions beyond the first are not compared with the rows
 * (minutes each; `--compare-all` does), and the first is compared after one reference run.
 *
 * Works in a database of its own (`<database>_bench_metrics_<pid>`, dropped at the end unless
 * --keep). The bulk seed is written in SQL
 * with the triggers off (session_replication_role = replica, which also skips the foreign keys: only
 * the organization and the customers are real rows) and the aggregates rebuilt once by
 * metrics_rebuild(); both are timed. Then, per question: p50/p95/p99 wall time and CPU milliseconds
 * per request of the PostgreSQL backends (read from /proc: PostgreSQL runs on this machine) and of
 * this process, the statement in-process and GET /v1/metrics/ through HTTP against an API running in
 * this process (so its node CPU is API + client), with the load average beside them; every
 * aggregate answer is compared with the rows' answer (customer, time zones, a product, every
 * interval).
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import pg from 'pg';
import { createApp } from '../api/src/app.ts';
import { loadConfig } from '../api/src/config.ts';
import { closeDeps, createDeps } from '../api/src/deps.ts';
import { computeMetricsFromBuckets, computeMetricsFromRows, type MetricsQuery } from '../api/src/modules/metrics/service.ts';
import { dropDatabase, ensureDatabase } from '../infra/src/services.ts';
import { arg } from './common.ts';
import { seedMetricsRows } from './metrics-seed.ts';

const bigArg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const raw = i >= 0 ? process.argv[i + 1] : process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const m = raw ? /^([\d_.]+)m$/i.exec(raw.trim()) : null;
  return m ? Math.round(Number(m[1]!.replace(/_/g, '')) * 1e6) : arg(name, fallback);
};
const ORDERS = bigArg('orders', 1_000_000);
const RUNS = arg('runs', 200);
const KEEP = process.argv.includes('--keep');
const COMPARE_ALL = process.argv.includes('--compare-all');
const CUSTOMERS = 100;
const DAY = 86_400_000;

const base = loadConfig();
const url = new URL(base.DATABASE_URL);
url.pathname = `/${decodeURIComponent(url.pathname.slice(1))}_bench_metrics_${process.pid}`;
const dbUrl = url.toString();
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const ms = (v: number) => `${v.toFixed(1)} ms`;
const secs = (since: number) => `${((performance.now() - since) / 1000).toFixed(0)} s`;

/** User+system CPU of a process in milliseconds (Linux /proc, clock ticks of 10 ms). */
function procCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0; // a backend that ended meanwhile
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main() {
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model}; ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; load ${load()}`);
  await ensureDatabase(dbUrl, { recreate: true });
  // The API in this process, on the bench database (migrations applied by it).
  const deps = await createDeps({ ...base, DATABASE_URL: dbUrl, LOG_LEVEL: 'warn' }, 'bench-metrics');
  await deps.orm.migrator.up();
  const server: Server = await new Promise((resolve) => {
    const s = createApp(deps).listen(0, '127.0.0.1', () => resolve(s));
  });
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const product = '00000000-0000-4000-8000-000000000002';
    const price = '00000000-0000-4000-8000-000000000003';
    // A seller, an organization and a token through the API; the customers as rows.
    const http = async (path: string, init: { method?: string; cookie?: string; token?: string; json?: unknown } = {}) => {
      const res = await fetch(`${apiUrl}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
          ...(init.cookie ? { cookie: init.cookie } : {}),
          ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        },
        body: init.json === undefined ? undefined : JSON.stringify(init.json),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text.slice(0, 300)}`);
      return { res, body: text ? JSON.parse(text) : null };
    };
    const tag = Math.random().toString(36).slice(2, 10);
    const up = await http('/api/auth/sign-up/email', { method: 'POST', json: { email: `bench-${tag}@example.com`, password: 'correct horse battery', name: 'Bench' } });
    const cookie = up.res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const org: string = (await http('/v1/organizations/', { method: 'POST', cookie, json: { name: 'Bench metrics', slug: `bench-metrics-${tag}` } })).body.id;
    const customers = (
      await db.query<{ id: string }>(
        `insert into "customers" ("id", "created_at", "organization_id", "email", "email_verified", "external_id", "metadata")
         select gen_random_uuid(), now(), $1, 'c' || g || '@bench.local', false, 'ext-' || g, '{}'::jsonb from generate_series(1, $2) g
         returning "id"`,
        [org, CUSTOMERS],
      )
    ).rows.map((r) => r.id);
    const token: string = (
      await http('/v1/organization-access-tokens/', { method: 'POST', cookie, json: { organization_id: org, comment: 'bench', scopes: ['metrics:read'] } })
    ).body.token;

    let t = performance.now();
    await db.query('set session_replication_role = replica');
    const subIds = await seedMetricsRows(db, { orders: ORDERS, organizationId: org, customers, productId: product, priceId: price });
    console.log(`seed: ${ORDERS.toLocaleString('en')} orders, ${subIds.length.toLocaleString('en')} subscriptions in ${secs(t)} (load ${load()})`);
    t = performance.now();
    await db.query('select metrics_rebuild()');
    console.log(`metrics_rebuild(): ${secs(t)} (load ${load()})`);
    await db.query('set session_replication_role = origin');
    // The lists' kept counts were skipped with the triggers too.
    await db.query('select list_counts_rebuild()');
    await db.query('analyze');
    const sizes = (
      await db.query<Record<string, string>>(
        `select (select count(*) from orders) as orders, (select count(*) from metrics_order_facts) as facts,
                (select count(*) from metrics_order_buckets) as buckets, (select count(*) from metrics_order_buckets where class = 0) as day,
                (select count(*) from metrics_subscription_buckets) as subs, (select count(*) from metrics_customer_order_buckets) as c_buckets,
                (select count(*) from metrics_customer_order_buckets where class = 0 and customer_id = $1) as c_day,
                (select count(*) from metrics_customer_subscription_buckets where customer_id = $1) as c_subs,
                (select count(*) from orders where customer_id = $1) as c_orders`,
        [customers[1]],
      )
    ).rows[0]!;
    console.log(
      `${sizes.orders} orders; aggregates: ${sizes.facts} order facts, ${sizes.buckets} order bucket rows (${sizes.day} hour/day class), ` +
        `${sizes.subs} subscription bucket rows; per customer ${sizes.c_buckets} rows in all, the measured customer ${sizes.c_orders} orders: ` +
        `${sizes.c_day} hour/day-class rows, ${sizes.c_subs} subscription bucket rows`,
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
    await db.query('set local session_replication_role = replica');
    const off = await insertCost(INSERTS);
    await db.query('alter table orders enable always trigger orders_metrics_insert_delete');
    // A deferred constraint trigger: fired after each insert here, not at the commit this transaction never reaches.
    await db.query('set constraints orders_metrics_insert_delete immediate');
    const on = await insertCost(INSERTS);
    await db.query('rollback');
    console.log(
      `order insert (${INSERTS} single-row renewals each): without the trigger ${off.cpu.toFixed(3)} ms backend CPU, ${off.wall.toFixed(3)} ms wall; ` +
        `with it ${on.cpu.toFixed(3)} ms CPU, ${on.wall.toFixed(3)} ms wall (load ${load()})`,
    );

    const endDate = new Date().toISOString().slice(0, 10);
    const since = (days: number) => new Date(Date.now() - days * DAY).toISOString().slice(0, 10);
    const query = (extra: Partial<MetricsQuery>): MetricsQuery => ({
      startDate: since(30),
      endDate,
      interval: 'day',
      timezone: 'UTC',
      organizationIds: [org],
      ...extra,
    });
    const qs = (q: MetricsQuery) =>
      new URLSearchParams({
        start_date: q.startDate,
        end_date: q.endDate,
        interval: q.interval,
        timezone: q.timezone,
        ...(q.customerIds ? { customer_id: q.customerIds[0]! } : {}),
        ...(q.productIds ? { product_id: q.productIds[0]! } : {}),
      }).toString();
    const em = deps.orm.em.fork();
    const emPid = (await em.getConnection().execute<{ pid: number }[]>('select pg_backend_pid() as pid'))[0]!.pid;
    // Every backend of the bench database but this client's: the API's pool (HTTP) or the fork's (in-process).
    const backends = async () =>
      (
        await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')
      ).rows.map((r) => r.pid);
    const measure = async (label: string, runs: number, fn: () => Promise<unknown>, pids: () => Promise<number[]>) => {
      for (let i = 0; i < 3; i++) await fn();
      const walls: number[] = [];
      const ps = await pids();
      const pgBefore = ps.reduce((n, p) => n + procCpuMs(p), 0);
      const nodeBefore = process.cpuUsage();
      for (let i = 0; i < runs; i++) {
        const s = performance.now();
        await fn();
        walls.push(performance.now() - s);
      }
      const node = process.cpuUsage(nodeBefore);
      const pgMs = ps.reduce((n, p) => n + procCpuMs(p), 0) - pgBefore;
      walls.sort((a, b) => a - b);
      console.log(
        `  ${label.padEnd(46)} p50 ${ms(pct(walls, 50))}, p95 ${ms(pct(walls, 95))}, p99 ${ms(pct(walls, 99))}; ` +
          `CPU/request: PostgreSQL ${(pgMs / runs).toFixed(1)} ms, node ${((node.user + node.system) / 1000 / runs).toFixed(1)} ms (${runs} runs, load ${load()})`,
      );
    };
    const inProcess = async () => [emPid];
    const same = async (q: MetricsQuery) => {
      const buckets = await computeMetricsFromBuckets(em, q);
      return buckets !== null && JSON.stringify(buckets) === JSON.stringify(await computeMetricsFromRows(em, q));
    };
    const viaHttp = async (q: MetricsQuery) => {
      const { body } = await http(`/v1/metrics/?${qs(q)}`, { token });
      return body;
    };

    // The seed gives every customer the same share of orders; customer 0 (and 50) has only pending ones
    // (g % 50 = 0), customer 1 renewals of its subscriptions, customer 7 one-time purchases.
    const one = customers[1]!;
    console.log(`\nGET /v1/metrics/, 31 daily periods ${since(30)} to ${endDate}, 12 figures:`);
    for (const [label, q] of [
      ['one customer', query({ customerIds: [one] })],
      ['all customers', query({})],
    ] as const) {
      await measure(`${label}: HTTP`, RUNS, () => viaHttp(q), backends);
      await measure(`${label}: statement in-process, aggregates`, RUNS, () => computeMetricsFromBuckets(em, q), inProcess);
      // The rows take seconds (one customer) and minutes (all) per run at 10 M orders: 3 and 1 runs there.
      const referenceRuns = ORDERS > 2_000_000 ? (q.customerIds ? 3 : 1) : Math.max(3, Math.ceil(RUNS / (q.customerIds ? 4 : 40)));
      await measure(`${label}: statement in-process, rows (reference)`, referenceRuns, () => computeMetricsFromRows(em, q), inProcess);
      console.log(`  answers ${(await same(q)) ? 'identical' : 'DIFFER'}`);
    }

    console.log('\nmore questions (aggregates in-process; answers compared with the rows):');
    const questions: [string, MetricsQuery][] = [];
    for (const [who, customerIds] of [
      ['all customers', undefined],
      ['one customer', [one]],
    ] as [string, string[] | undefined][]) {
      questions.push(
        [`${who}, Asia/Kolkata days`, query({ customerIds, timezone: 'Asia/Kolkata' })],
        ...(customerIds ? ([['a one-time buyer (customer 7), UTC days', query({ customerIds: [customers[7]!] })]] as [string, MetricsQuery][]) : []),
        [`${who}, America/New_York days, the product`, query({ customerIds, timezone: 'America/New_York', productIds: [product] })],
        [`${who}, hours over 2 days`, query({ customerIds, interval: 'hour', startDate: since(2) })],
        [`${who}, weeks over 180 days`, query({ customerIds, interval: 'week', startDate: since(180) })],
        [`${who}, months over 365 days, Europe/Paris`, query({ customerIds, interval: 'month', startDate: since(365), timezone: 'Europe/Paris' })],
        [`${who}, years over 3 years`, query({ customerIds, interval: 'year', startDate: since(3 * 365) })],
      );
    }
    let differ = 0;
    let skipped = 0;
    for (const [label, q] of questions) {
      await measure(label, Math.ceil(RUNS / 4), () => computeMetricsFromBuckets(em, q), inProcess);
      if (!q.customerIds && ORDERS > 2_000_000 && !COMPARE_ALL) {
        skipped++;
        console.log('  answers not compared (all customers from the rows: minutes per question at this size; --compare-all)');
        continue;
      }
      const ok = await same(q);
      if (!ok) differ++;
      console.log(`  answers ${ok ? 'identical' : 'DIFFER'}`);
    }
    console.log(
      `\n${differ === 0 ? 'every compared aggregate answer equals the rows' : `${differ} answers DIFFER from the rows`}` +
        `${skipped ? ` (${skipped} all-customer questions not compared)` : ''} (load ${load()})`,
    );
  } finally {
    await db.end();
    await new Promise((r) => server.close(r));
    await closeDeps(deps);
    if (!KEEP) await dropDatabase(dbUrl).catch(() => undefined);
    else console.log(`kept database ${decodeURIComponent(url.pathname.slice(1))}`);
  }
}

await main();
