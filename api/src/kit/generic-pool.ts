/**
 * A small pool of connections whose sessions run under `plan_cache_mode = force_generic_plan` (set in
 * their startup options), beside the ORM's pool. For prepared statements whose parameters only bound
 * ranges, where PostgreSQL under `auto` plans again on every execution: on this pool each such read
 * is one statement (no set / reset around it), and the ORM's pool keeps `auto` for everything else.
 *
 * One per ORM pool, made on first use from that pool's connection settings (same database, user,
 * type parsers, connect timeout); `closeGenericPool` ends it and is called wherever the ORM's pool
 * is closed (`closeDeps`).
 */
import pg from 'pg';
import { releaseDeadConnections } from '../mikro-orm.config.ts';

/** Connections per generic pool: the reads that use it are short single statements. */
const GENERIC_POOL_MAX = 3;

/** The `application_name` of its sessions (names them in pg_stat_activity). */
export const GENERIC_POOL_APPLICATION_NAME = 'emporia generic-plan reads';

const pools = new WeakMap<pg.Pool, pg.Pool>();

/** The generic-plan pool beside `main` (created on first use). */
export function genericPool(main: pg.Pool): pg.Pool {
  let pool = pools.get(main);
  if (pool) return pool;
  const { min: _min, max: _max, options, ...connection } = main.options as pg.PoolConfig & { options?: string };
  pool = new pg.Pool({
    ...connection,
    // pg keeps the password as a non-enumerable property of `options`: the spread above leaves it out.
    password: main.options.password,
    min: 0,
    max: GENERIC_POOL_MAX,
    application_name: GENERIC_POOL_APPLICATION_NAME,
    options: [options, '-c plan_cache_mode=force_generic_plan'].filter(Boolean).join(' '),
  });
  // Same handling as the ORM's pool: a connection whose socket ends while lent is given back with an
  // error; a dropped idle connection's 'error' is not fatal (its query, if any, rejects on its own and
  // the API maps that to 503 through `isDatabaseUnavailable`).
  releaseDeadConnections(pool);
  pool.on('connect', (client) => client.on('error', () => {}));
  pool.on('error', () => {});
  pools.set(main, pool);
  return pool;
}

/** The generic pool beside `main`, if one was made. */
export function existingGenericPool(main: pg.Pool): pg.Pool | undefined {
  return pools.get(main);
}

/** Ends the generic pool beside `main`, if one was made (waits for its lent connections). */
export async function closeGenericPool(main: pg.Pool): Promise<void> {
  const pool = pools.get(main);
  if (!pool) return;
  pools.delete(main);
  await pool.end();
}
