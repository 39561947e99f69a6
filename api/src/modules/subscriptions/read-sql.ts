/**
 * A subscription's read model built by PostgreSQL, for reads without the ORM (`kit/read-sql.ts`): the
 * JSON `serializeSubscription` returns (customer, user, product, price, discount embedded; dates as
 * `toISOString()`; the product is its stored read model), and the pieces orders embed too
 * (`subscriptionBaseJsonSql`, `discountBaseJsonSql`). `tests/reads/customers-orders-subscriptions-sql-equivalence.test.ts` compares them
 * with the serializers on the same rows; change both together.
 */
import { containsPattern } from '../../kit/db.ts';
import type { Page } from '../../kit/pagination.ts';
import { isoSql, sqlIn, type RawJson, type SqlReader } from '../../kit/read-sql.ts';
import { splicedOne, splicedPage, type FragmentKind } from '../../kit/read-fragments.ts';
import { customerJsonSql, userJsonSql } from '../customers/read-sql.ts';
import { mediaPublicUrlPrefix } from '../products/media.ts';
import { priceJsonSql, storedProductJsonSql, withMediaUrls } from '../products/read-sql.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES } from './entities.ts';

/** `serializeDiscountBase` of the discount row `d`, null when `d` is null (a left join found none). */
export function discountBaseJsonSql(d: string): string {
  const common = `'id', ${d}.id, 'created_at', ${isoSql(`${d}.created_at`)}, 'modified_at', ${isoSql(`${d}.modified_at`)},
    'metadata', ${d}.metadata, 'name', ${d}.name, 'code', ${d}.code, 'starts_at', ${isoSql(`${d}.starts_at`)},
    'ends_at', ${isoSql(`${d}.ends_at`)}, 'max_redemptions', ${d}.max_redemptions, 'redemptions_count', ${d}.redemptions_count,
    'organization_id', ${d}.organization_id`;
  const value = `case when ${d}.type = 'percentage' then jsonb_build_object('type', 'percentage', 'basis_points', coalesce(${d}.basis_points, 0))
    else jsonb_build_object('type', 'fixed', 'amount', coalesce(${d}.amount, 0), 'currency', coalesce(${d}.currency, 'usd')) end`;
  const duration = `case when ${d}.duration = 'repeating' then jsonb_build_object('duration', 'repeating', 'duration_in_months', coalesce(${d}.duration_in_months, 1))
    else jsonb_build_object('duration', ${d}.duration) end`;
  return `case when ${d}.id is not null then (jsonb_build_object(${common}) || ${value} || ${duration})::json end`;
}

/** The keys and values of `serializeSubscriptionBase` of the subscription row `s`, for a `json_build_object`. */
function subscriptionBaseFields(s: string): string {
  return `'id', ${s}.id, 'created_at', ${isoSql(`${s}.created_at`)},
    'modified_at', ${isoSql(`${s}.modified_at`)}, 'metadata', ${s}.metadata, 'amount', ${s}.amount, 'currency', ${s}.currency,
    'recurring_interval', ${s}.recurring_interval, 'status', ${s}.status, 'current_period_start', ${isoSql(`${s}.current_period_start`)},
    'current_period_end', ${isoSql(`${s}.current_period_end`)}, 'cancel_at_period_end', ${s}.cancel_at_period_end,
    'canceled_at', ${isoSql(`${s}.canceled_at`)}, 'started_at', ${isoSql(`${s}.started_at`)}, 'ends_at', ${isoSql(`${s}.ends_at`)},
    'ended_at', ${isoSql(`${s}.ended_at`)}, 'trial_start', ${isoSql(`${s}.trial_start`)}, 'trial_end', ${isoSql(`${s}.trial_end`)},
    'customer_id', ${s}.customer_id, 'product_id', ${s}.product_id, 'price_id', ${s}.price_id, 'discount_id', ${s}.discount_id,
    'checkout_id', ${s}.checkout_id, 'customer_cancellation_reason', ${s}.customer_cancellation_reason,
    'customer_cancellation_comment', ${s}.customer_cancellation_comment, 'user_id', ${s}.customer_id`;
}

/** `serializeSubscriptionBase` of the subscription row `s`, null when `s` is null (a left join found none). */
export function subscriptionBaseJsonSql(s: string): string {
  return `case when ${s}.id is not null then json_build_object(${subscriptionBaseFields(s)}) end`;
}

let itemSql: string | undefined;
/**
 * The subscription whose id is the SQL expression `idExpr` as `serializeSubscription` builds it (type
 * `json`), its product's media URLs still marked: the statement's text goes through `withMediaUrls`.
 */
function subscriptionJsonSql(idExpr: string): string {
  // The statement's text is the same for every request: built once.
  itemSql ??= buildSubscriptionJsonSql(storedProductJsonSql('s.product_id'));
  return itemSql.replace('$ID', () => idExpr);
}

const FROM = `subscriptions s join customers c on c.id = s.customer_id join products p on p.id = s.product_id
      join product_prices pp on pp.id = s.price_id left join discounts d on d.id = s.discount_id`;

/** The subscription row `s`'s JSON over `FROM`'s rows, the product given as an SQL expression. */
function subscriptionObjectSql(product: string): string {
  return `json_build_object(${subscriptionBaseFields('s')},
      'customer', ${customerJsonSql('c')}, 'user', ${userJsonSql('c')}, 'product', ${product},
      'price', ${priceJsonSql('pp', 'p')}, 'discount', ${discountBaseJsonSql('d')})`;
}

function buildSubscriptionJsonSql(product: string): string {
  return `(select ${subscriptionObjectSql(product)} from ${FROM} where s.id = $ID)`;
}

/**
 * The version of the subscription row `s` (an alias over `subscriptions`): the row versions (`xmin`)
 * of the subscription, its customer, price and a metered price's meter, discount and the product's
 * stored read model; any committed write to one of them changes this text. The product row itself is
 * not read: every change of a product or of its prices and a meter's rename rewrites the product's
 * `product_read_models` row in the same transaction (constraint triggers of
 * Migration20261126021500), so its `xmin` changes with them. One primary-key lookup per row.
 */
const versionOf = (s: string) => `concat(${s}.xmin, ':', (select c.xmin from customers c where c.id = ${s}.customer_id),
    ':', (select concat(pp.xmin, ':', mt.xmin) from product_prices pp left join meters mt on mt.id = pp.meter_id where pp.id = ${s}.price_id),
    ':', (select d.xmin from discounts d where d.id = ${s}.discount_id),
    ':', (select r.xmin from product_read_models r where r.product_id = ${s}.product_id))`;

/** A whole subscription's JSON (media URLs in place) kept by its version (`versionOf`). */
const subscriptionFragment: FragmentKind = {
  name: 'subscription',
  build: () => `select s.id::text as id, ${versionOf('s')} as v, ${withMediaUrls(`${subscriptionObjectSql('r.json')}::text`)} as j
    from ${FROM} left join product_read_models r on r.product_id = s.product_id where s.id = any(?::uuid[])`,
  variant: mediaPublicUrlPrefix,
};

/** The version of the subscription whose id is `idExpr` (`splicedPage`). */
const subscriptionVersionSql = (idExpr: string) => `(select ${versionOf('s')} from subscriptions s where s.id = ${idExpr})`;

export interface SubscriptionListFilters {
  organizationIds: string[];
  product_id?: string[];
  customer_id?: string[];
  discount_id?: string[];
  active?: boolean | null;
  query?: string | null;
}

/** Sorting keys → expressions over the subscription row `x` (relations by what a person reads, as `listSubscriptions`). */
const SORT: Record<string, string> = {
  customer: '(select c.email from customers c where c.id = x.customer_id)',
  status: 'x.status',
  started_at: 'x.started_at',
  current_period_end: 'x.current_period_end',
  amount: 'x.amount',
  created_at: 'x.created_at',
  product: '(select p.name from products p where p.id = x.product_id)',
  discount: '(select d.name from discounts d where d.id = x.discount_id)',
  organization: '(select o.name from organizations o where o.id = x.organization_id)',
};

/** `GET /v1/subscriptions/`: the filters, sorting and pagination of `listSubscriptions`, as one JSON text. */
export function listSubscriptionsJson(em: SqlReader, f: SubscriptionListFilters, sorting: string[], page: Page): Promise<RawJson> {
  const params: unknown[] = [];
  const where = [sqlIn('x.organization_id', f.organizationIds, params)];
  if (f.product_id) where.push(sqlIn('x.product_id', f.product_id, params));
  if (f.query) {
    where.push('x.product_id in (select p.id from products p where p.name ilike ?)');
    params.push(containsPattern(f.query));
  }
  if (f.customer_id) where.push(sqlIn('x.customer_id', f.customer_id, params));
  if (f.discount_id) where.push(sqlIn('x.discount_id', f.discount_id, params));
  if (f.active != null) {
    const active = sqlIn('x.status', ACTIVE_SUBSCRIPTION_STATUSES, params);
    where.push(f.active ? active : `not (${active})`);
  }
  const sort = sorting.map((s) => ({ expr: SORT[s.replace(/^-/, '')] ?? 'x.created_at', dir: s.startsWith('-') ? 'desc' : 'asc' }));
  return splicedPage(
    em,
    {
      matched: `select x.id${sort.map((c, i) => `, ${c.expr} as s${i}`).join('')} from subscriptions x where ${where.join(' and ')}`,
      params,
      orderBy: [...sort.map((c, i) => `m.s${i} ${c.dir}`), 'm.id asc'].join(', '),
      item: subscriptionJsonSql,
      text: withMediaUrls,
      kind: subscriptionFragment,
      version: subscriptionVersionSql,
      counted: where.length === 1 ? { kind: 'subscriptions', organizationIds: f.organizationIds } : undefined,
    },
    page,
  );
}

/**
 * `GET /v1/subscriptions/:id`: the subscription's JSON text if it belongs to one of `organizationIds`,
 * else null (404); kept by version as the list's items (the same kept text serves both).
 */
export function subscriptionJson(em: SqlReader, organizationIds: string[], id: string): Promise<RawJson | null> {
  const params: unknown[] = [id];
  return splicedOne(em, {
    table: 'subscriptions',
    where: `x.id = ? and ${sqlIn('x.organization_id', organizationIds, params)}`,
    params,
    item: subscriptionJsonSql,
    text: withMediaUrls,
    kind: subscriptionFragment,
    version: subscriptionVersionSql,
    rowVersion: versionOf,
  });
}
