/**
 * Benchmark (not a test): the quantities read of an organization that stopped ingesting while
 * another one keeps ingesting, and how many rows `events_xids` holds meanwhile.
 *
 *   npx tsx bench/meters-idle.ts [--events 200000] [--batch 1000] [--reads 200]
 *
 * On a fresh database (`<database>_bench_idle_<pid>`, dropped at the end): two organizations with a
 * counting meter each. The idle one gets 30 days of events (10,000) and its merge, then nothing more.
 * The busy one then commits `--events` events in batches of `--batch` (one transaction each), merging
 * after each as the API does. Then the idle organization's 30-day read, all customers and by day, as
 * the route's prepared path answers it (`cachedQuantitiesJson`), `--reads` times in a row: p50 / p95
 * wall and its PostgreSQL CPU per read (every backend of the database, from /proc), whether a read
 * finds something pending (then it scans the unmerged tail), and the rows of `events_xids`; the busy
 * organization's read beside it.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { EntityManager } from '../api/src/kit/db.ts';
import { cachedQuantitiesJson, rememberMeter } from '../api/src/modules/meters/quantities-read.ts';
import { mergeRollups, rebuildRollup } from '../api/src/modules/meters/rollups.ts';
import { arg, onScratchDatabase } from './common.ts';
import { sumCpuMs } from './ingest-measure.ts';

const EVENTS = arg('events', 200_000);
const BATCH = arg('batch', 1000);
const READS = arg('reads', 200);
const DAY = 86_400_000;

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const filter = { conjunction: 'and' as const, clauses: [] };
const aggregation = { func: 'count' as const };

onScratchDatabase('bench_idle', 2, async ({ orm, db, name: dbName }) => {
  const em = () => orm.em.fork() as EntityManager;
  const [idle, busy] = [randomUUID(), randomUUID()];
  const meters = new Map<string, string>();
  for (const org of [idle, busy]) {
    await db.query(
      `insert into "organizations" ("id", "created_at", "name", "slug", "socials", "feature_settings", "subscription_settings", "metadata")
       values ($1, now(), 'bench', $2, '[]', '{}', '{}', '{}')`,
      [org, `bench-${org}`],
    );
    const meter = randomUUID();
    meters.set(org, meter);
    await db.query(
      `insert into "meters" ("id", "created_at", "organization_id", "name", "filter", "aggregation", "metadata") values ($1, now(), $2, 'bench', $3, $4, '{}')`,
      [meter, org, JSON.stringify(filter), JSON.stringify(aggregation)],
    );
    await rebuildRollup(em(), meter);
  }
  const end = Date.now();
  const insert = (org: string, count: number, start: number, span: number) =>
    db.query(
      `insert into "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "external_customer_id", "metadata")
       select gen_random_uuid(), now(), to_timestamp(($1::float8 + g::float8 / $3::float8 * $4::float8) / 1000), 'api.call', 'user', $2::uuid,
         'customer-' || (g % 50), '{}'
       from generate_series(0, $3::int - 1) g`,
      [start, org, count, span],
    );
  await insert(idle, 10_000, end - 30 * DAY, 30 * DAY);
  await mergeRollups(em(), idle);

  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}; load average ${load()}`);
  const t0 = performance.now();
  for (let n = 0; n < EVENTS; n += BATCH) {
    await insert(busy, Math.min(BATCH, EVENTS - n), end - DAY + n * 100, BATCH * 100);
    await mergeRollups(em(), busy);
  }
  console.log(`busy organization: ${EVENTS.toLocaleString('en-US')} events in batches of ${BATCH}, each merged: ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const xids = (await db.query<{ all: string }>(`select count(*) as all from "events_xids"`)).rows[0]!;
  const pending = async (org: string) =>
    (
      await db.query<{ p: boolean }>(
        `select exists (select 1 from "events_xids" x where x."xid" >= pg_snapshot_xmin(m."rolled_snapshot")::text::bigint
           and not pg_visible_in_snapshot(x."xid"::text::xid8, m."rolled_snapshot")
           and x."organization_id" = m."organization_id") as p
         from "meters" m where m."id" = $1`,
        [meters.get(org)],
      )
    ).rows[0]!.p;
  console.log(`events_xids: ${xids.all} rows; the idle meter has ${(await pending(idle)) ? 'something' : 'nothing'} pending`);

  const backends = async () => (await db.query<{ pid: number }>(`select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'`, [dbName])).rows.map((r) => r.pid);
  for (const [name, org] of [
    ['idle', idle],
    ['busy', busy],
  ] as const) {
    const meter = meters.get(org)!;
    const { rows } = await db.query<{ snap: string }>(`select "rolled_snapshot"::text as snap from "meters" where "id" = $1`, [meter]);
    rememberMeter(meter, { organizationId: org, filter, aggregation, rolledSnapshot: rows[0]!.snap });
    const q = { start: new Date(end - 30 * DAY), end: new Date(end), interval: 'day' as const };
    if (!(await cachedQuantitiesJson(em(), meter, [org], q))) throw new Error('the prepared path did not answer');
    const pids = await backends();
    const cpu0 = sumCpuMs(pids);
    const walls: number[] = [];
    for (let r = 0; r < READS; r++) {
      const w = performance.now();
      await cachedQuantitiesJson(em(), meter, [org], q);
      walls.push(performance.now() - w);
    }
    const cpu = (sumCpuMs(pids) - cpu0) / READS;
    walls.sort((a, b) => a - b);
    console.log(
      `  ${name.padEnd(5)} organization's read (30 days by day, all customers): p50 ${quantile(walls, 0.5).toFixed(2)} ms, p95 ${quantile(walls, 0.95).toFixed(2)} ms, ` +
        `PostgreSQL CPU ${cpu.toFixed(2)} ms per read (load average ${load()})`,
    );
  }
});
