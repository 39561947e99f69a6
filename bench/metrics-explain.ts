/**
 * Benchmark helper (not a test): EXPLAIN (ANALYZE, BUFFERS) of the metrics statement that
 * GET /v1/metrics/ runs from the aggregates, on a database kept by `npm run bench:metrics -- --keep`
 * (or bench:ingest), for one customer (the bench's customer 1) and for all customers, 31 daily
 * periods in UTC; then each statement run `--runs` times on one connection with its backend's CPU
 * per run.
 *
 *   npx tsx bench/metrics-explain.ts --database <kept database> [--runs 50] [--compare] [--kolkata]
 *
 * `--compare`: the one customer's answer from the aggregates against the one from the rows
 * (`--compare-all`: all customers' too, minutes at 10 M orders). `--kolkata`: periods in Asia/Kolkata.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { loadConfig } from '../api/src/config.ts';
import { initOrm } from '../api/src/kit/db.ts';
import { closeGenericPool } from '../api/src/kit/generic-pool.ts';
import { allEntities } from '../api/src/modules/entities.ts';
import { bucketsStatement, computeMetricsFromBuckets, computeMetricsFromRows, type MetricsQuery } from '../api/src/modules/metrics/service.ts';
import { arg } from './common.ts';

const i = process.argv.indexOf('--database');
const DATABASE = i >= 0 ? process.argv[i + 1] : undefined;
if (!DATABASE) throw new Error('--database <name of a database kept by bench:metrics --keep>');
const RUNS = arg('runs', 50);
const url = new URL(loadConfig().DATABASE_URL);
url.pathname = `/${DATABASE}`;
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

const db = new pg.Client({ connectionString: url.toString() });
await db.connect();
try {
  const org = (await db.query<{ id: string }>('select organization_id as id from orders limit 1')).rows[0]!.id;
  const customers = (
    await db.query<{ id: string }>(`select id from customers where organization_id = $1 order by (substring(email from 2 for position('@' in email) - 2))::int`, [org])
  ).rows.map((r) => r.id);
  const pid = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const DAY = 86_400_000;
  const base: MetricsQuery = {
    startDate: new Date(Date.now() - 30 * DAY).toISOString().slice(0, 10),
    endDate: new Date().toISOString().slice(0, 10),
    interval: 'day',
    timezone: process.argv.includes('--kolkata') ? 'Asia/Kolkata' : 'UTC',
    organizationIds: [org],
  };
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model}; load ${load()}; database ${DATABASE}`);
  const questions: [string, MetricsQuery][] = [
    ['one customer (customer 1)', { ...base, customerIds: [customers[1]!] }],
    ['all customers', base],
  ];
  for (const [label, q] of questions) {
    const { text, values } = bucketsStatement(q);
    const name = `explain_${label.length}`;
    for (let k = 0; k < 3; k++) await db.query({ name, text, values });
    const plan = await db.query(`explain (analyze, buffers, settings) ${text}`, values);
    console.log(`\n== ${label}\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}`);
    const before = cpuMs(pid);
    const walls: number[] = [];
    for (let k = 0; k < RUNS; k++) {
      const t = performance.now();
      await db.query({ name, text, values });
      walls.push(performance.now() - t);
    }
    walls.sort((a, b) => a - b);
    if (process.argv.includes('--compare-all') || (process.argv.includes('--compare') && q.customerIds)) {
      const orm = await initOrm({ DATABASE_URL: url.toString(), DATABASE_POOL_MAX: 2 } as never, allEntities);
      const t = performance.now();
      const rows = await computeMetricsFromRows(orm.em.fork(), q);
      const rowsMs = performance.now() - t;
      const same = JSON.stringify(await computeMetricsFromBuckets(orm.em.fork(), q)) === JSON.stringify(rows);
      console.log(`${label}: answers ${same ? 'identical to' : 'DIFFER from'} the rows' (rows: ${rowsMs.toFixed(0)} ms, ${rows.reduce((n, p) => n + p.orders, 0)} orders)`);
      await closeGenericPool(await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> }).getNativeClient());
      await orm.close();
    }
    console.log(
      `${label}: ${RUNS} runs prepared, p50 / p95 / p99 ${[0.5, 0.95, 0.99].map((p) => walls[Math.min(RUNS - 1, Math.floor(p * RUNS))]!.toFixed(1)).join(' / ')} ms, backend CPU ${((cpuMs(pid) - before) / RUNS).toFixed(2)} ms/run (load ${load()})`,
    );
  }
} finally {
  await db.end();
}
