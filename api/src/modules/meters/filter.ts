/**
 * Meter filters and aggregations compiled to parameterized SQL over the `events` table.
 *
 * Semantics (NOTES-POLAR "Meters and events"):
 * - A group joins its clauses with AND or OR; an empty clause list matches every event (both for
 *   `and` and `or`, so an empty nested group is neutral, as at the top level).
 * - A clause's property is an event column when it names one (`name`, `source`, `timestamp`,
 *   `customer_id`, `external_customer_id`), otherwise a metadata key.
 * - Values compare by the JSON type of the stored value: a string clause value only matches string
 *   values, an integer only numbers, a boolean only booleans; any other pairing, and a missing key,
 *   makes the clause false (for `ne` and `not_like` too). The `timestamp` column compares with an
 *   integer of Unix seconds.
 * - `like` / `not_like` are case-sensitive "contains" / "does not contain" on strings (no wildcards:
 *   `%` and `_` are ordinary characters).
 * - sum / max / min / avg aggregate the numeric values of a metadata key; events whose value is
 *   missing or not a number are left out. No matching value at all gives 0.
 *
 * A clause on a missing key or a NULL column evaluates to NULL rather than false; filters only ever
 * combine clauses with AND and OR (never NOT), and for such monotone formulas NULL and false select
 * the same rows, so no coalesce is needed (which keeps plain column comparisons index-friendly). No
 * expression casts a value that could fail: jsonb values are compared as jsonb after a type check,
 * and the one cast, in aggregations, sits behind a CASE that guarantees the type.
 */
import { SqlParams } from '../events/sql.ts';
import type { Aggregation, Filter, FilterClause, FilterOperator } from './entities.ts';

type ColumnType = 'string' | 'number';

/**
 * Event columns a clause may name: how to compare them (alias-relative SQL; `timestamp` against
 * Unix seconds through to_timestamp, so the time indexes still apply) and the JSON type they match.
 */
const COLUMNS: Record<string, { sql: (alias: string) => string; type: ColumnType; value?: (placeholder: string) => string }> = {
  name: { sql: (a) => `${a}"name"`, type: 'string' },
  source: { sql: (a) => `${a}"source"`, type: 'string' },
  customer_id: { sql: (a) => `${a}"customer_id"::text`, type: 'string' },
  external_customer_id: { sql: (a) => `${a}"external_customer_id"`, type: 'string' },
  timestamp: { sql: (a) => `${a}"timestamp"`, type: 'number', value: (p) => `to_timestamp(${p})` },
};

const COMPARISON: Record<Exclude<FilterOperator, 'like' | 'not_like'>, string> = {
  eq: '=',
  ne: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
};

function isGroup(c: FilterClause | Filter): c is Filter {
  return 'conjunction' in c;
}

function jsonType(value: FilterClause['value']): 'string' | 'number' | 'boolean' {
  return typeof value === 'string' ? 'string' : typeof value === 'boolean' ? 'boolean' : 'number';
}

/**
 * Unix seconds for to_timestamp, which only takes 4713 BC … 294276 AD: beyond that range the value
 * becomes ±infinity, which compares with every stored timestamp exactly as the number would.
 */
function epochSeconds(v: number): number | string {
  if (v > 9_000_000_000_000) return 'infinity';
  if (v < -200_000_000_000) return '-infinity';
  return v;
}

/** Ordering of strings is byte order (collation "C"), whatever the database's default collation. */
const ordered = (op: string) => op !== '=' && op !== '<>';

function compileClause(clause: FilterClause, params: SqlParams, alias: string): string {
  const type = jsonType(clause.value);
  const like = clause.operator === 'like' || clause.operator === 'not_like';
  if (like && type !== 'string') return 'false';
  const contains = (text: string) =>
    `strpos(${text}, ${params.add(clause.value, 'text')}) ${clause.operator === 'like' ? '>' : '='} 0`;
  const op = COMPARISON[clause.operator as keyof typeof COMPARISON];
  const column = COLUMNS[clause.property];

  if (column) {
    if (column.type !== type) return 'false';
    const col = column.sql(alias);
    if (like) return contains(col);
    if (type === 'string') return `${col} ${op} ${params.add(clause.value, 'text')}${ordered(op) ? ' collate "C"' : ''}`;
    return `${col} ${op} ${column.value ? column.value(params.add(epochSeconds(clause.value as number), 'float8')) : params.add(clause.value, 'numeric')}`;
  }

  const key = params.add(clause.property, 'text');
  const json = `(${alias}"metadata" -> ${key})`;
  const text = `(${alias}"metadata" ->> ${key})`;
  const typeCheck = `jsonb_typeof(${json}) = '${type}'`;
  if (like) return `(${typeCheck} and ${contains(text)})`;
  if (type === 'string') {
    return `(${typeCheck} and ${text}${ordered(op) ? ' collate "C"' : ''} ${op} ${params.add(clause.value, 'text')})`;
  }
  // Numbers and booleans: jsonb against jsonb (numeric / boolean order), after the type check.
  return `(${typeCheck} and ${json} ${op} to_jsonb(${params.add(clause.value, type === 'number' ? 'numeric' : 'boolean')}))`;
}

/**
 * SQL boolean expression for a meter filter. `alias` prefixes column names (`'e.'` for `events e`).
 * User values (properties, values) only enter through `params`.
 */
export function compileFilter(filter: Filter, params: SqlParams, alias = ''): string {
  const parts = filter.clauses.map((c) => (isGroup(c) ? compileFilter(c, params, alias) : compileClause(c, params, alias)));
  if (parts.length === 0) return 'true';
  if (parts.length === 1) return parts[0]!;
  return `(${parts.join(filter.conjunction === 'or' ? ' or ' : ' and ')})`;
}

/** SQL aggregate for a meter's aggregation over the rows of one bucket (NULL when nothing to aggregate). */
export function compileAggregation(aggregation: Aggregation, params: SqlParams, alias = ''): string {
  if (aggregation.func === 'count') return 'count(*)';
  const key = params.add(aggregation.property, 'text');
  const numeric = `case when jsonb_typeof(${alias}"metadata" -> ${key}) = 'number' then (${alias}"metadata" ->> ${key})::numeric end`;
  return `${aggregation.func}(${numeric})`;
}

/** Depth of nested groups and total clause count, for input limits. */
export function filterSize(filter: Filter, depth = 1): { depth: number; clauses: number } {
  let maxDepth = depth;
  let clauses = 0;
  for (const c of filter.clauses) {
    if (isGroup(c)) {
      const inner = filterSize(c, depth + 1);
      maxDepth = Math.max(maxDepth, inner.depth);
      clauses += inner.clauses;
    } else clauses += 1;
  }
  return { depth: maxDepth, clauses };
}
