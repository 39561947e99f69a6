/**
 * An order's read model built by PostgreSQL, for reads without the ORM (`kit/read-sql.ts`): the JSON
 * `serializeOrder` returns (customer, user, product, price, discount, subscription embedded; the
 * order's lines, or one line for the whole order; dates as `toISOString()`).
 * `tests/reads/customers-orders-subscriptions-sql-equivalence.test.ts` compares it with the serializer on the
 * same rows; change both together.
 */
import { containsPattern } from '../../kit/db.ts';
import type { Page } from '../../kit/pagination.ts';
import { isoSql, sqlIn, type RawJson, type SqlReader } from '../../kit/read-sql.ts';
import { splicedOne, splicedPage, type FragmentKind } from '../../kit/read-fragments.ts';
import { billingAddressJsonSql, customerJsonSql, userJsonSql } from '../customers/read-sql.ts';
import { mediaPublicUrlPrefix } from '../products/media.ts';
import { priceJsonSql, storedProductJsonSql, withMediaUrls } from '../products/read-sql.ts';
import { discountBaseJsonSql, subscriptionBaseJsonSql } from '../subscriptions/read-sql.ts';
import type { OrderListQuery } from './list.ts';

const created = isoSql('o.created_at');
const modified = isoSql('o.modified_at');

/** The order row `o`'s own keys and values up to `checkout_id`, for a `json_build_object`. */
const HEAD = `'id', o.id, 'created_at', ${created}, 'modified_at', ${modified},
      'metadata', o.metadata, 'custom_field_data', o.custom_field_data, 'status', o.status, 'paid', o.status <> 'pending',
      'subtotal_amount', o.subtotal_amount, 'discount_amount', o.discount_amount, 'net_amount', o.net_amount, 'amount', o.net_amount,
      'tax_amount', o.tax_amount, 'total_amount', o.total_amount, 'refunded_amount', o.refunded_amount,
      'refunded_tax_amount', o.refunded_tax_amount, 'currency', o.currency, 'billing_reason', o.billing_reason,
      'billing_address', ${billingAddressJsonSql('o.billing_address')},
      'customer_id', o.customer_id, 'product_id', o.product_id, 'product_price_id', o.product_price_id,
      'discount_id', o.discount_id, 'subscription_id', o.subscription_id, 'checkout_id', o.checkout_id`;

/** The order's `items`: its lines, or one line for the whole order. */
const ITEMS = `case when o.lines is null or jsonb_typeof(o.lines) <> 'array'
        then json_build_array(json_build_object('id', o.id, 'created_at', ${created}, 'modified_at', ${modified}, 'label', p.name,
          'amount', o.net_amount, 'tax_amount', o.tax_amount, 'proration', false, 'product_price_id', o.product_price_id))
        else coalesce((select json_agg(json_build_object('id', l->'id', 'created_at', ${created}, 'modified_at', ${modified},
          'label', l->'label', 'amount', l->'amount', 'tax_amount', l->'taxAmount', 'proration', l->'proration',
          'product_price_id', l->'productPriceId') order by i) from jsonb_array_elements(o.lines) with ordinality e(l, i)), '[]'::json) end`;

const FROM = `orders o join customers c on c.id = o.customer_id join products p on p.id = o.product_id
      join product_prices pp on pp.id = o.product_price_id left join discounts d on d.id = o.discount_id
      left join subscriptions s on s.id = o.subscription_id`;

/** The order row `o`'s JSON over `FROM`'s rows, the product given as an SQL expression. */
function orderObjectSql(product: string): string {
  return `json_build_object(${HEAD},
      'customer', ${customerJsonSql('c')}, 'user_id', o.customer_id, 'user', ${userJsonSql('c')},
      'product', ${product}, 'product_price', ${priceJsonSql('pp', 'p')},
      'discount', ${discountBaseJsonSql('d')}, 'subscription', ${subscriptionBaseJsonSql('s')},
      'items', ${ITEMS})`;
}

function buildOrderJsonSql(product: string): string {
  return `(select ${orderObjectSql(product)} from ${FROM} where o.id = $ID)`;
}

/**
 * The version of the order row `o` (an alias over `orders`): the row versions (`xmin`) of the order,
 * its customer, price and a metered price's meter, discount, subscription and the product's stored
 * read model; any committed write to one of them changes this text. The product row itself is not
 * read: every change of a product or of its prices (insert, update, delete) and a meter's rename
 * rewrites the product's `product_read_models` row in the same transaction (constraint triggers of
 * Migration20261126021500), so its `xmin` changes with them. One primary-key lookup per row, no
 * join of the order again: what a by-id read and each item of a page pay per request.
 */
const versionOf = (o: string) => `concat(${o}.xmin, ':', (select c.xmin from customers c where c.id = ${o}.customer_id),
    ':', (select concat(pp.xmin, ':', mt.xmin) from product_prices pp left join meters mt on mt.id = pp.meter_id where pp.id = ${o}.product_price_id),
    ':', (select d.xmin from discounts d where d.id = ${o}.discount_id), ':', (select s.xmin from subscriptions s where s.id = ${o}.subscription_id),
    ':', (select r.xmin from product_read_models r where r.product_id = ${o}.product_id))`;

/** A whole order's JSON (media URLs in place) kept by its version (`versionOf`). */
const orderFragment: FragmentKind = {
  name: 'order',
  build: () => `select o.id::text as id, ${versionOf('o')} as v, ${withMediaUrls(`${orderObjectSql('r.json')}::text`)} as j
    from ${FROM} left join product_read_models r on r.product_id = o.product_id where o.id = any(?::uuid[])`,
  variant: mediaPublicUrlPrefix,
};

/** The version of the order whose id is `idExpr` (`splicedPage`). */
const orderVersionSql = (idExpr: string) => `(select ${versionOf('o')} from orders o where o.id = ${idExpr})`;

let itemSql: string | undefined;
/**
 * The order whose id is the SQL expression `idExpr` as `serializeOrder` builds it (type `json`), its
 * product's media URLs still marked: the statement's text goes through `withMediaUrls`.
 */
function orderJsonSql(idExpr: string): string {
  // The statement's text is the same for every request: built once.
  itemSql ??= buildOrderJsonSql(storedProductJsonSql('o.product_id'));
  return itemSql.replace('$ID', () => idExpr);
}

/** Sorting keys → expressions over the order row `x` (relations by what a person reads, as `orderOrderBy`). */
const SORT: Record<string, string> = {
  created_at: 'x.created_at',
  amount: 'x.net_amount',
  net_amount: 'x.net_amount',
  customer: '(select c.email from customers c where c.id = x.customer_id)',
  product: '(select p.name from products p where p.id = x.product_id)',
  discount: '(select d.name from discounts d where d.id = x.discount_id)',
  subscription: 'x.subscription_id',
  organization: '(select g.name from organizations g where g.id = x.organization_id)',
};

/**
 * `product_billing_type` / `product_price_type` as `productTypeFilter`: both follow the product's
 * recurring interval; given together an order must match both.
 */
function productTypeSql(lists: (readonly string[] | undefined)[]): string | undefined {
  let allowed = new Set(['one_time', 'recurring']);
  for (const list of lists) if (list) allowed = new Set(list.filter((v) => allowed.has(v)));
  if (allowed.size === 2) return undefined;
  if (allowed.size === 0) return 'false';
  return `p.recurring_interval is ${allowed.has('recurring') ? 'not ' : ''}null`;
}

/** `GET /v1/orders/` of the organizations: the filters, sorting and pagination of `listOrders`, as one JSON text. */
export function listOrdersJson(em: SqlReader, organizationIds: string[], q: OrderListQuery, page: Page): Promise<RawJson> {
  const params: unknown[] = [];
  const where = [sqlIn('x.organization_id', organizationIds, params)];
  for (const [key, column] of [
    ['discount_id', 'x.discount_id'],
    ['customer_id', 'x.customer_id'],
    ['checkout_id', 'x.checkout_id'],
    ['subscription_id', 'x.subscription_id'],
  ] as const) {
    const ids = q[key];
    if (ids) where.push(sqlIn(column, ids, params));
  }
  const product: string[] = [];
  const type = productTypeSql([q.product_billing_type, q.product_price_type]);
  if (type) product.push(type);
  if (q.product_id) product.push(sqlIn('p.id', q.product_id, params));
  if (q.query) {
    product.push('p.name ilike ?');
    params.push(containsPattern(q.query));
  }
  if (product.length) where.push(`x.product_id in (select p.id from products p where ${product.join(' and ')})`);
  const sort = q.sorting.map((s) => ({ expr: SORT[s.replace(/^-/, '')] ?? 'x.created_at', dir: s.startsWith('-') ? 'desc' : 'asc' }));
  return splicedPage(
    em,
    {
      matched: `select x.id${sort.map((c, i) => `, ${c.expr} as s${i}`).join('')} from orders x where ${where.join(' and ')}`,
      params,
      orderBy: [...sort.map((c, i) => `m.s${i} ${c.dir}`), 'm.id asc'].join(', '),
      item: orderJsonSql,
      text: withMediaUrls,
      kind: orderFragment,
      version: orderVersionSql,
      counted: where.length === 1 ? { kind: 'orders', organizationIds } : undefined,
    },
    page,
  );
}

/**
 * `GET /v1/orders/:id`: the order's JSON text if it belongs to one of `organizationIds`, else null (404);
 * kept by version as the list's items (the same kept text serves both).
 */
export function orderJson(em: SqlReader, organizationIds: string[], id: string): Promise<RawJson | null> {
  const params: unknown[] = [id];
  return splicedOne(em, {
    table: 'orders',
    where: `x.id = ? and ${sqlIn('x.organization_id', organizationIds, params)}`,
    params,
    item: orderJsonSql,
    text: withMediaUrls,
    kind: orderFragment,
    version: orderVersionSql,
    rowVersion: versionOf,
  });
}
