/**
 * Benchmark (not a test): what the rollup merge (`mergeRollups`, api/src/modules/meters/rollups.ts)
 * costs PostgreSQL per 1000 events, the number `bench/ingest` cannot separate from the COPY.
 *
 *   npx tsx bench/meters-merge.ts [--events 20000] [--rounds 5]
 *
 * On a fresh database (`<database>_bench_merge_<pid>`, dropped at the end): one organization, 100
 * customers, one meter (a filtered sum, as bench/ingest's); each round commits `--events` events in
 * batches of 1000 (one transaction each, so the merge sees many transactions), then one merge takes
 * them all. Two shapes of timestamps: "live" (every event of a round within the same minute, as
 * events sent as they happen) and "spread" (bench/ingest's sample: 20,000 events over three days, so
 * hours, days and minutes each get many rows). Prints PostgreSQL backend CPU (from /proc) and wall
 * per 1000 events merged, and the rollup rows written, with the load average beside them.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { EntityManager } from '../api/src/kit/db.ts';
import { mergeRollups, rebuildRollup } from '../api/src/modules/meters/rollups.ts';
import { arg, onScratchDatabase } from './common.ts';
import { cpuMs } from './ingest-measure.ts';

const EVENTS = arg('events', 20_000);
const ROUNDS = arg('rounds', 5);
const BATCH = 1000;
const DAY = 86_400_000;

const load = () => os.loadavg()[0]!.toFixed(2);

onScratchDatabase('bench_merge', 1, async ({ orm, db }) => {
  const em = orm.em.fork() as EntityManager;
  const ormPid = (await em.getConnection().execute<{ pid: number }[]>('select pg_backend_pid() as pid'))[0]!.pid;
  const org = randomUUID();
  const customers = Array.from({ length: 100 }, () => randomUUID());
  const meter = randomUUID();
  // Foreign keys off for this session only: no organization or customer rows, only their ids.
  await db.query(`set session_replication_role = replica`);
  const filter = { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api.call' }, { property: 'cached', operator: 'eq', value: false }] };
  const aggregation = { func: 'sum', property: 'tokens' };
  await db.query(
    `insert into "meters" ("id", "created_at", "organization_id", "name", "filter", "aggregation", "metadata") values ($1, now(), $2, 'bench', $3, $4, '{}')`,
    [meter, org, JSON.stringify(filter), JSON.stringify(aggregation)],
  );
  await rebuildRollup(orm.em.fork() as EntityManager, meter);

  const insert = (from: number, count: number, start: number, span: number) =>
    db.query(
      `insert into "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "metadata")
       select gen_random_uuid(), now(), to_timestamp(($1::float8 + floor((g - $5)::float8 / $6::float8 * $7::float8)) / 1000),
         case when g % 10 < 7 then 'api.call' else 'upload' end, 'user', $2::uuid, ($3::uuid[])[g % 100 + 1],
         jsonb_build_object('tokens', (g * 7919) % 1000, 'model', (array['gpt-4', 'gpt-3.5', 'claude'])[g % 3 + 1], 'cached', g % 5 = 0)
       from generate_series($4::bigint, ($4 + $8 - 1)::bigint) g`,
      [start, org, customers, from, 0, EVENTS, span, count],
    );

  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`merge of ${EVENTS.toLocaleString('en-US')} events committed in batches of ${BATCH}, ${ROUNDS} rounds per shape`);
  let g = 0;
  for (const [shape, span] of [
    ['live (one minute)', 50_000],
    ['spread (three days)', 3 * DAY],
  ] as const) {
    const cpu: number[] = [];
    const wall: number[] = [];
    let rows = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const start = Date.now() - 40 * DAY + r * 4 * DAY + 17_000;
      for (let b = 0; b < EVENTS; b += BATCH) {
        const from = g;
        g += BATCH;
        await insert(from, BATCH, start + Math.floor((b / EVENTS) * span), Math.floor((BATCH / EVENTS) * span));
      }
      const c0 = cpuMs(ormPid);
      const t0 = performance.now();
      rows += await mergeRollups(orm.em.fork() as EntityManager, org);
      wall.push(performance.now() - t0);
      cpu.push(cpuMs(ormPid) - c0);
    }
    const per = (xs: number[]) => ((xs.reduce((s, x) => s + x, 0) / xs.length) * BATCH) / EVENTS;
    const counts = (
      await db.query<{ h: string; d: string; m: string }>(
        `select (select count(*) from "meter_rollups") as h, (select count(*) from "meter_rollup_days") as d, (select count(*) from "meter_rollup_minutes") as m`,
      ).catch(async () => db.query<{ h: string; d: string; m: string }>(`select (select count(*) from "meter_rollups") as h, '-' as d, '-' as m`))
    ).rows[0]!;
    console.log(
      `  ${shape.padEnd(20)} PostgreSQL CPU ${per(cpu).toFixed(2)} ms and wall ${per(wall).toFixed(2)} ms per 1000 events merged ` +
        `(${(rows / ROUNDS).toFixed(0)} hourly rows per merge; tables now: ${counts.h} hourly, ${counts.d} daily, ${counts.m} minute rows; load average ${load()})`,
    );
  }
});
