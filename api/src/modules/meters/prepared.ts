/**
 * Statements of the meter and metrics reads as named prepared statements (`$n` placeholders): a
 * statement of this size takes PostgreSQL longer to parse and plan than to run, and a prepared one
 * is parsed once per connection. Outside a transaction it goes to the ORM's `pg` pool (as
 * `kit/read-sql.ts` does for the JSON reads); inside one it runs on the transaction's connection.
 */
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { EntityManager } from '../../kit/db.ts';
import { runSql } from '../events/sql.ts';

/** Distinct statement texts prepared by this process; past the limit, statements run unprepared. */
const names = new Map<string, string>();
const MAX_PREPARED = 200;

/**
 * `generic`: the statement is executed under `plan_cache_mode = force_generic_plan`, set on its
 * connection for that one execution and reset before the connection returns to the pool (the rest
 * of the pool keeps `auto`). For statements whose parameters only bound ranges PostgreSQL would
 * otherwise plan again on every execution (its generic plan's default estimates cost more on paper).
 */
export async function preparedRows<T>(em: EntityManager, text: string, values: unknown[], opts: { generic?: boolean } = {}): Promise<T[]> {
  if (em.isInTransaction()) return (await runSql<T>(em, text, values)).rows;
  const pool = await (em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
  let name = names.get(text);
  if (name === undefined && names.size < MAX_PREPARED) {
    name = `q_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  const query = name ? { name, text, values } : { text, values };
  if (!opts.generic || !name) return (await pool.query(query)).rows as T[];
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('set plan_cache_mode = force_generic_plan');
    try {
      return (await client.query(query)).rows as T[];
    } finally {
      await client.query('reset plan_cache_mode').catch((err: Error) => {
        broken = err;
      });
    }
  } finally {
    // A connection whose setting could not be reset is closed, not returned to the pool.
    client.release(broken);
  }
}
