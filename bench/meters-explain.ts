/**
 * Benchmark helper (not a test): EXPLAIN (ANALYZE, BUFFERS) of the one prepared quantities statement
 * (`meters/quantities-read.ts`) on a database kept by `bench:ingest --keep`, 30 daily buckets ending
 * now, for one customer and for all customers, and the backend CPU per run of the statement.
 *
 *   npx tsx bench/meters-explain.ts --database <kept> [--runs 200] [--generic]
 *
 * The statement is the first one the read runs (the one that answers when nothing is pending), under
 * force_generic_plan when the API runs it so (on its generic-plan pool); `--generic` sets force_generic_plan in any case.
 */
import pg from 'pg';
import { loadConfig } from '../api/src/config.ts';
import { initOrm } from '../api/src/kit/db.ts';
import { closeGenericPool, genericPool } from '../api/src/kit/generic-pool.ts';
import { allEntities } from '../api/src/modules/entities.ts';
import { cachedQuantitiesJson, rememberMeter } from '../api/src/modules/meters/quantities-read.ts';
import { meterWithRollupState } from '../api/src/modules/meters/rollups.ts';
import { arg } from './common.ts';
import { cpuMs } from './ingest-measure.ts';

const i = process.argv.indexOf('--database');
const DATABASE = i >= 0 ? process.argv[i + 1] : undefined;
if (!DATABASE) throw new Error('--database <name of a database kept by bench:ingest --keep>');
const RUNS = arg('runs', 200);
const GENERIC = process.argv.includes('--generic');
/** A parameter value as an SQL literal (EXECUTE takes no bound parameters). */
const literal = (v: unknown): string => {
  const text = Array.isArray(v) ? `{${v.map((x) => `"${String(x).replace(/["\\]/g, '\\$&')}"`).join(',')}}` : String(v);
  return `'${text.replace(/'/g, "''")}'`;
};
const url = new URL(loadConfig().DATABASE_URL);
url.pathname = `/${DATABASE}`;
const orm = await initOrm({ DATABASE_URL: url.toString(), DATABASE_POOL_MAX: 1 } as never, allEntities);
const db = new pg.Client({ connectionString: url.toString() });
await db.connect();
try {
  const em = orm.em.fork();
  const pool = await (em.getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> }).getNativeClient();
  const { id: meterId, organization_id: org } = (await db.query('select "id", "organization_id" from "meters" limit 1')).rows[0];
  const customer = (await db.query(`select "id" from "customers" order by substring("email" from 2 for position('@' in "email") - 2)::int offset 1 limit 1`)).rows[0].id;
  const meter = await meterWithRollupState(em, meterId, [org]);
  if (!meter?.current) throw new Error('the meter rollups are not current: read it once through the API first');
  const end = new Date();
  const start = new Date(end.getTime() - 30 * 86_400_000);
  for (const [label, customerIds] of [['one customer', [customer]], ['all customers', undefined]] as const) {
    rememberMeter(meterId, meter);
    const q = { start, end, interval: 'day' as const, customerIds: customerIds ? [...customerIds] : undefined };
    // The first named statement the read runs (on the pool or on a client it checked out), and
    // whether it ran under force_generic_plan as the API runs it.
    let captured: { text: string; values: unknown[] } | undefined;
    let apiGeneric = false;
    const watch = (c: unknown) => {
      if (typeof c === 'string' && c.startsWith('set plan_cache_mode = force_generic_plan') && !captured) apiGeneric = true;
      if (c && typeof c === 'object' && 'name' in c) captured ??= c as unknown as { text: string; values: unknown[] };
    };
    const poolQuery = pool.query;
    const poolConnect = pool.connect;
    const p = pool as unknown as { query: unknown; connect: unknown };
    p.query = (c: unknown, ...rest: unknown[]) => (watch(c), (poolQuery as (...a: unknown[]) => unknown).call(pool, c, ...rest));
    // The generic-plan pool's sessions run under force_generic_plan.
    const generic = genericPool(pool);
    const genericQuery = generic.query;
    const g = generic as unknown as { query: unknown };
    g.query = (c: unknown, ...rest: unknown[]) => {
      if (!captured) apiGeneric = true;
      return watch(c), (genericQuery as (...a: unknown[]) => unknown).call(generic, c, ...rest);
    };
    p.connect = async () => {
      const client = await (poolConnect as () => Promise<pg.PoolClient>).call(pool);
      const clientQuery = client.query;
      (client as unknown as { query: unknown }).query = (c: unknown, ...rest: unknown[]) => (watch(c), (clientQuery as (...a: unknown[]) => unknown).call(client, c, ...rest));
      const release = client.release;
      client.release = (err?: Error | boolean) => {
        (client as unknown as { query: unknown }).query = clientQuery;
        client.release = release;
        return release.call(client, err);
      };
      return client;
    };
    try {
      if (!(await cachedQuantitiesJson(em, meterId, [org], q))) throw new Error('the prepared path answered nothing');
    } finally {
      p.query = poolQuery;
      p.connect = poolConnect;
      g.query = genericQuery;
    }
    const client = await pool.connect();
    try {
      const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid;
      if (GENERIC || apiGeneric) await client.query('set plan_cache_mode = force_generic_plan');
      for (let k = 0; k < 10; k++) await client.query({ name: `explain_${label.split(' ')[0]}`, text: captured!.text, values: captured!.values });
      const c0 = cpuMs(pid);
      for (let k = 0; k < RUNS; k++) await client.query({ name: `explain_${label.split(' ')[0]}`, text: captured!.text, values: captured!.values });
      const per = (cpuMs(pid) - c0) / RUNS;
      const explain = `explain (analyze, buffers, settings) execute ${`explain_${label.split(' ')[0]}`}(${captured!.values.map(literal).join(', ')})`;
      const plan = await client.query(explain);
      console.log(`\n## ${label}: PostgreSQL CPU ${per.toFixed(2)} ms per run of the prepared statement (${RUNS} runs${GENERIC || apiGeneric ? ', generic plan' : ''})\n`);
      console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
    } finally {
      client.release();
    }
  }
} finally {
  await db.end();
  await closeGenericPool(await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> }).getNativeClient());
  await orm.close();
}
