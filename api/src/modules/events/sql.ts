/**
 * Raw, truly parameterized SQL for the event and meter queries (bulk insert, jsonb filters,
 * generate_series buckets) that the ORM's query builder does not express.
 *
 * MikroORM's `connection.execute(sql, params)` inlines the values into the SQL text client-side;
 * here the statement goes to the driver as a compiled query with `$n` placeholders and a separate
 * value array, so PostgreSQL binds every user value as a parameter. User values only ever enter a
 * statement through `SqlParams.add`; identifiers come from fixed whitelists in the code.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { EntityManager } from '../../kit/db.ts';

export class SqlParams {
  readonly values: unknown[] = [];

  /** Binds a value and returns its placeholder (`$3`, or `$3::jsonb` with a cast). */
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return `$${this.values.length}${cast ? `::${cast}` : ''}`;
  }
}

/** Runs one parameterized statement on the EntityManager's connection (or its open transaction). */
export async function runSql<R = Record<string, unknown>>(
  em: EntityManager,
  sql: string,
  values: readonly unknown[] = [],
): Promise<{ rows: R[]; affected: number }> {
  const ctx = (em.getTransactionContext() as Kysely<unknown> | undefined) ?? em.getConnection().getClient();
  const res = await ctx.executeQuery<R>(CompiledQuery.raw(sql, [...values]));
  return { rows: res.rows, affected: Number(res.numAffectedRows ?? 0) };
}

/**
 * `?metadata[key]=value` filters (deepObject style, as the SDK sends them). Express' default query
 * parser keeps `metadata[key]` as a literal key; an extended parser nests it under `metadata`.
 * Both are read. Several values for one key are alternatives (OR); keys combine with AND.
 */
export function metadataQueryOf(rawQuery: Record<string, unknown>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const push = (key: string, value: unknown) => {
    const values = (Array.isArray(value) ? value : [value]).filter((v) => typeof v === 'string') as string[];
    if (values.length) (out[key] ??= []).push(...values);
  };
  for (const [k, v] of Object.entries(rawQuery)) {
    const m = /^metadata\[([^\]]+)\]$/.exec(k);
    if (m) push(m[1]!, v);
  }
  const nested = rawQuery.metadata;
  if (nested && typeof nested === 'object' && !Array.isArray(nested)) {
    for (const [k, v] of Object.entries(nested as Record<string, unknown>)) push(k, v);
  }
  return out;
}

/** SQL for metadata equality filters on a jsonb column: the value's text form must be one of those given. */
export function metadataQuerySql(column: string, filters: Record<string, string[]>, params: SqlParams): string[] {
  return Object.entries(filters).map(
    ([key, values]) => `(${column} ->> ${params.add(key, 'text')}) = any(${params.add(values, 'text[]')})`,
  );
}
