/**
 * Statements of the meter and metrics reads as named prepared statements (`$n` placeholders): a
 * statement of this size takes PostgreSQL longer to parse and plan than to run, and a prepared one
 * is parsed once per connection. Outside a transaction it goes to the ORM's `pg` pool (as
 * `kit/read-sql.ts` does for the JSON reads); inside one it runs on the transaction's connection.
 */
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { EntityManager } from '../../kit/db.ts';
import { genericPool } from '../../kit/generic-pool.ts';
import { runSql } from '../events/sql.ts';

/** Distinct statement texts prepared by this process; past the limit, statements run unprepared. */
const names = new Map<string, string>();
const MAX_PREPARED = 200;

/**
 * `generic`: the statement runs on the generic-plan pool beside the ORM's (`kit/generic-pool.ts`),
 * whose sessions run under `plan_cache_mode = force_generic_plan`: for statements whose parameters
 * only bound ranges, which PostgreSQL under `auto` would plan again on every execution (its generic
 * plan's default estimates cost more on paper). Still one statement, one round trip.
 */
export async function preparedRows<T>(em: EntityManager, text: string, values: unknown[], opts: { generic?: boolean } = {}): Promise<T[]> {
  if (em.isInTransaction()) return (await runSql<T>(em, text, values)).rows;
  const main = await (em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
  let name = names.get(text);
  if (name === undefined && names.size < MAX_PREPARED) {
    name = `q_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  const query = name ? { name, text, values } : { text, values };
  const pool = opts.generic && name ? genericPool(main) : main;
  return (await pool.query(query)).rows as T[];
}
