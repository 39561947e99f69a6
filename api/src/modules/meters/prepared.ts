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

export async function preparedRows<T>(em: EntityManager, text: string, values: unknown[]): Promise<T[]> {
  if (em.isInTransaction()) return (await runSql<T>(em, text, values)).rows;
  const pool = await (em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
  let name = names.get(text);
  if (name === undefined && names.size < MAX_PREPARED) {
    name = `q_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  const res = await pool.query(name ? { name, text, values } : { text, values });
  return res.rows as T[];
}
