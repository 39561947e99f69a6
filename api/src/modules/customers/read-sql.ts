/**
 * A customer's read model built by PostgreSQL, for reads without the ORM (`kit/read-sql.ts`): the JSON
 * `serializeCustomer` returns (billing address with every key, Gravatar URL, dates as
 * `toISOString()`). Orders and subscriptions embed it with `customerJsonSql('c')` over a joined
 * customer row. `tests/reads/customers-orders-subscriptions-sql-equivalence.test.ts` compares it with the serializer on the
 * same rows; change both together.
 */
import { containsPattern } from '../../kit/db.ts';
import type { Page } from '../../kit/pagination.ts';
import { isoSql, jsonOne, sqlIn, type RawJson, type SqlReader } from '../../kit/read-sql.ts';
import { splicedPage, type FragmentKind } from '../../kit/read-fragments.ts';

/** `serializeBillingAddress` of the jsonb expression `a`: null, or the six keys with null for missing ones. */
export function billingAddressJsonSql(a: string): string {
  return `case when jsonb_typeof(${a}) = 'object' then json_build_object('line1', ${a}->'line1', 'line2', ${a}->'line2',
    'postal_code', ${a}->'postal_code', 'city', ${a}->'city', 'state', ${a}->'state', 'country', ${a}->'country') end`;
}

/** `serializeCustomer` of the customer row `c` (type `json`); the URL's `?` is `chr(63)`, placeholders being `?`. */
export function customerJsonSql(c: string): string {
  return `json_build_object('id', ${c}.id, 'created_at', ${isoSql(`${c}.created_at`)}, 'modified_at', ${isoSql(`${c}.modified_at`)},
    'metadata', ${c}.metadata, 'external_id', ${c}.external_id, 'email', ${c}.email, 'email_verified', ${c}.email_verified,
    'name', ${c}.name, 'billing_address', ${billingAddressJsonSql(`${c}.billing_address`)}, 'tax_id', ${c}.tax_id,
    'organization_id', ${c}.organization_id, 'deleted_at', ${isoSql(`${c}.deleted_at`)},
    'avatar_url', 'https://www.gravatar.com/avatar/' || md5(lower(btrim(${c}.email))) || chr(63) || 'd=404')`;
}

/** `serializeUser` of the customer row `c`: `{id, email, public_name}` (the name, else the email's local part). */
export function userJsonSql(c: string): string {
  return `json_build_object('id', ${c}.id, 'email', ${c}.email, 'public_name', coalesce(nullif(${c}.name, ''), split_part(${c}.email, '@', 1)))`;
}

const item = (idExpr: string) => `(select ${customerJsonSql('c')} from customers c where c.id = ${idExpr})`;

/**
 * A list item kept by version (`kit/read-fragments.ts`): the customer's JSON is built from its row
 * alone, so its version is that row's `xmin`.
 */
const customerFragment: FragmentKind = {
  name: 'customer',
  build: () => `select c.id::text as id, c.xmin::text as v, ${customerJsonSql('c')}::text as j from customers c where c.id = any(?::uuid[])`,
};
const customerVersionSql = (idExpr: string) => `(select c.xmin::text from customers c where c.id = ${idExpr})`;

export interface CustomerListFilters {
  organizationIds: string[];
  email?: string;
  query?: string;
  /** `metadata[key]=value` filters: per key, the accepted values (as text). */
  metadata: [string, string[]][];
}

const SORT: Record<string, string> = { created_at: 'x.created_at', email: 'x.email', name: 'x.name' };

/**
 * `GET /v1/customers/`: live customers of the organizations, filtered, sorted and paged as one JSON text,
 * the items kept by version.
 */
export function listCustomersJson(em: SqlReader, f: CustomerListFilters, sorting: string[], page: Page): Promise<RawJson> {
  const params: unknown[] = [];
  const where = [sqlIn('x.organization_id', f.organizationIds, params), 'x.deleted_at is null'];
  for (const [key, values] of f.metadata) {
    params.push(key);
    where.push(sqlIn('x.metadata ->> ?', values, params));
  }
  if (f.email) {
    where.push('x.email = ?');
    params.push(f.email.trim().toLowerCase());
  }
  if (f.query) {
    const like = containsPattern(f.query);
    where.push('(x.email ilike ? or x.name ilike ? or x.external_id ilike ?)');
    params.push(like, like, like);
  }
  const sort = sorting.map((s) => ({ expr: SORT[s.replace(/^-/, '')] ?? 'x.created_at', dir: s.startsWith('-') ? 'desc' : 'asc' }));
  return splicedPage(
    em,
    {
      matched: `select x.id${sort.map((c, i) => `, ${c.expr} as s${i}`).join('')} from customers x where ${where.join(' and ')}`,
      params,
      orderBy: [...sort.map((c, i) => `m.s${i} ${c.dir}`), 'm.id asc'].join(', '),
      item,
      kind: customerFragment,
      version: customerVersionSql,
      counted: where.length === 2 ? { kind: 'customers', organizationIds: f.organizationIds } : undefined,
    },
    page,
  );
}

/**
 * `GET /v1/customers/:id` and `/external/:external_id`: the live customer's JSON text if it belongs to
 * one of `organizationIds`, else null (404). By external id the oldest live match wins, as `getVisibleCustomer`.
 */
export function customerJson(em: SqlReader, organizationIds: string[], by: { id: string } | { externalId: string }): Promise<RawJson | null> {
  const params: unknown[] = ['id' in by ? by.id : by.externalId];
  const key = 'id' in by ? 'x.id = ?' : 'x.external_id = ?';
  return jsonOne(em, {
    table: 'customers',
    where: `${key} and ${sqlIn('x.organization_id', organizationIds, params)} and x.deleted_at is null order by x.created_at asc`,
    params,
    item,
  });
}
