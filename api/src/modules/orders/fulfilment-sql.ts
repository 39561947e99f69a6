/**
 * The common fulfilment (fulfilment.ts `fulfilCheckout`) in plain SQL: a confirmed checkout of a
 * one-time product, without discount, upgraded subscription or metered price, whose benefits need no
 * row of their own beyond the grant and a license key (`license_keys`, `custom`), for a customer with
 * no active subscription. Anything else (and a retry that finds the order committed) answers `null`
 * with nothing written, and the caller runs the ORM path; both write the same rows and events
 * (tests/orders/fulfilment-sql.test.ts compares them on identical input).
 *
 * One transaction on one pooled connection, six statements: BEGIN; the checkout locked (`FOR UPDATE OF
 * c`, its row only) with everything the order and the events read (product, price, organization,
 * customer, whether an order exists, the products' read models built by PostgreSQL, the product's live
 * benefits, share-locked as on the ORM path); the customer locked (`FOR NO KEY UPDATE`, as
 * `emitCustomerStateChanged` and `savePaymentMethod` do); the customer's state and payment methods, read
 * after that lock; one write of the payment method, order, license keys, grants, the checkout
 * `succeeded` and the outbox events (data-modifying CTEs); COMMIT. The rows read become plain objects of
 * their entities' shape (plain-rows.ts, no ORM), so the events come from the same serializers as on the
 * ORM path.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { EntityManager } from '../../kit/db.ts';
import { Benefit } from '../benefits/entities.ts';
import { serializeBenefitGrant, type BenefitGrant } from '../benefits/grants.ts';
import { serializeBenefit } from '../benefits/schemas.ts';
import { Checkout } from '../checkouts/entities.ts';
import { serializeCheckoutWithProducts } from '../checkouts/schemas.ts';
import { Customer } from '../customers/entities.ts';
import { serializeCustomer } from '../customers/schemas.ts';
import { displayKey, generateLicenseKey, licenseKeyLimits, type LicenseKeysBenefitProperties } from '../license-keys/service.ts';
import { Organization } from '../organizations/entities.ts';
import type { ProcessorPaymentMethod } from '../payments/processor.ts';
import { Product, ProductPrice } from '../products/entities.ts';
import { productJsonSql } from '../products/read-sql.ts';
import type { ProductRead } from '../products/schemas.ts';
import type { WebhookEventType } from '../webhooks/outbox.ts';
import type { Order } from './entities.ts';
import { plainOf } from './plain-rows.ts';
import { receiptOf, type Receipt } from './receipt.ts';
import { serializeOrderWithProduct } from './schemas.ts';

type Json = Record<string, unknown>;

/** What the common fulfilment did (fulfilment.ts `FulfilResult`, whose every field it answers). */
export interface PlainFulfilResult {
  orderId: string;
  subscriptionId: null;
  customerId: string;
  productId: string;
  externalBenefitIds: string[];
  externalRevokeBenefitIds: string[];
  upgraded: false;
  succeeded: true;
  created: true;
  receipt: Receipt;
}

/** Off: every fulfilment takes the ORM path (the equivalence test and the bench's `--orm-fulfilment` compare both). */
let enabled = true;
export function setPlainSqlFulfilment(on: boolean): void {
  enabled = on;
}

/** How many fulfilments this process wrote on the plain-SQL path (the equivalence test checks which path ran). */
export const plainSqlFulfilmentStats = { used: 0 };

/** Benefit types whose grant is the grant row alone (`custom`) or with a new license key (`license_keys`). */
const PLAIN_TYPES = new Set(['license_keys', 'custom']);

interface ReadRow {
  c: Json;
  p: Json;
  pp: Json;
  o: Json;
  cu: Json;
  has_order: boolean;
  products: { id: string; product: ProductRead; ord: string | number | null }[];
  benefits: Json[];
}

interface StateRow {
  grants: { id: string; created_at: string; modified_at: string | null; granted_at: string; benefit_id: string; benefit_type: string; properties: Json }[];
  has_subscriptions: boolean;
  pm_id: string | null;
  has_default: boolean;
}

let readSql: string | undefined;
/** $1 checkout id (built on first use: the products' read model needs the storage `createDeps` sets up). */
const readSqlText = () => (readSql ??= `select to_jsonb(c) as c, to_jsonb(p) as p, to_jsonb(pp) as pp, to_jsonb(o) as o, to_jsonb(cu) as cu,
    exists (select 1 from orders x where x.checkout_id = c.id) as has_order,
    (select json_agg(json_build_object('id', x.id, 'product', ${productJsonSql('x.id')},
        'ord', (select min(cp.id) from checkout_products cp where cp.checkout_id = c.id and cp.product_id = x.id)))
      from products x
      where x.id = c.product_id or x.id in (select cp.product_id from checkout_products cp where cp.checkout_id = c.id)) as products,
    (select coalesce(jsonb_agg(to_jsonb(l) - 'link_order' order by l.link_order), '[]'::jsonb)
      from (select b.*, pb."order" as link_order from product_benefits pb join benefits b on b.id = pb.benefit_id
             where pb.product_id = c.product_id and b.deleted_at is null order by pb."order" for share of pb) l) as benefits
  from checkouts c
  join products p on p.id = c.product_id
  join product_prices pp on pp.id = c.product_price_id
  join organizations o on o.id = c.organization_id
  join customers cu on cu.id = c.customer_id
  where c.id = $1
  for update of c`);

const LOCK_CUSTOMER_SQL = `select 1 from customers where id = $1 for no key update`;

/** $1 customer, $2 processor, $3 the card's processor id (null: none to save). */
const STATE_SQL = `select
    (select coalesce(json_agg(json_build_object('id', g.id, 'created_at', g.created_at, 'modified_at', g.modified_at,
        'granted_at', g.granted_at, 'benefit_id', b.id, 'benefit_type', b.type, 'properties', g.properties) order by g.granted_at, g.id), '[]'::json)
      from benefit_grants g join benefits b on b.id = g.benefit_id
      where g.customer_id = $1 and g.granted_at is not null and g.revoked_at is null and b.deleted_at is null) as grants,
    exists (select 1 from subscriptions s where s.customer_id = $1 and s.status = 'active') as has_subscriptions,
    (select x.id from payment_methods x where x.processor = $2 and x.processor_id = $3) as pm_id,
    exists (select 1 from payment_methods x where x.customer_id = $1 and x.is_default and x.deleted_at is null) as has_default`;

/** $1 checkout, $2 now, $3 payment methods, $4 order, $5 license keys, $6 grants, $7 events (jsonb arrays); written only if the checkout is still `confirmed`. */
const WRITE_SQL = `with ck as (
    update checkouts set status = 'succeeded', modified_at = $2 where id = $1 and status = 'confirmed' returning id
  ), pm as (
    insert into payment_methods (id, created_at, modified_at, customer_id, processor, processor_id, type, brand, last4, exp_month, exp_year,
      wallet, is_default, deleted_at)
    select x.id, $2, null, x.customer_id, x.processor, x.processor_id, 'card', x.brand, x.last4, x.exp_month, x.exp_year, x.wallet,
      x.is_default, null
    from ck cross join jsonb_to_recordset($3::jsonb) as x(id uuid, customer_id uuid, processor text, processor_id text, brand text,
      last4 text, exp_month int, exp_year int, wallet text, is_default boolean)
  ), o as (
    insert into orders (id, created_at, modified_at, organization_id, customer_id, product_id, product_price_id, discount_id,
      subscription_id, checkout_id, status, billing_reason, subtotal_amount, discount_amount, net_amount, tax_amount, total_amount,
      refunded_amount, refunded_tax_amount, currency, billing_address, custom_field_data, metadata, processor_charge_id, lines)
    select x.id, $2, null, x.organization_id, x.customer_id, x.product_id, x.product_price_id, null, null, ck.id, x.status, 'purchase',
      x.subtotal_amount, x.discount_amount, x.net_amount, x.tax_amount, x.total_amount, 0, 0, x.currency, x.billing_address,
      x.custom_field_data, x.metadata, x.processor_charge_id, null
    from ck cross join jsonb_to_record($4::jsonb) as x(id uuid, organization_id uuid, customer_id uuid, product_id uuid,
      product_price_id uuid, status text, subtotal_amount int, discount_amount int, net_amount int, tax_amount int, total_amount int,
      currency text, billing_address jsonb, custom_field_data jsonb, metadata jsonb, processor_charge_id text)
    returning id
  ), lk as (
    insert into license_keys (id, created_at, modified_at, organization_id, customer_id, benefit_id, key, display_key, status,
      limit_activations, usage, limit_usage, validations, last_validated_at, expires_at)
    select x.id, $2, null, x.organization_id, x.customer_id, x.benefit_id, x.key, x.display_key, 'granted', x.limit_activations, 0,
      x.limit_usage, 0, null, x.expires_at
    from o cross join jsonb_to_recordset($5::jsonb) as x(id uuid, organization_id uuid, customer_id uuid, benefit_id uuid, key text,
      display_key text, limit_activations int, limit_usage int, expires_at timestamptz)
  ), g as (
    insert into benefit_grants (id, created_at, modified_at, customer_id, benefit_id, subscription_id, order_id, granted_at, revoked_at, properties)
    select x.id, $2, null, x.customer_id, x.benefit_id, null, o.id, $2, null, x.properties
    from o cross join jsonb_to_recordset($6::jsonb) as x(id uuid, customer_id uuid, benefit_id uuid, properties jsonb)
  ), ev as (
    insert into outbox_events (id, created_at, modified_at, organization_id, type, data, dispatched_at)
    select (e.v->>'id')::uuid, $2, null, (e.v->>'organization_id')::uuid, e.v->>'type', e.v->'data', null
    from o cross join jsonb_array_elements($7::jsonb) with ordinality as e(v, n)
    order by e.n
  )
  select (select count(*) from o)::int as n`;

function named(text: string): string {
  return `fulfil_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
}

async function q<T>(client: PoolClient, text: string, values: unknown[]): Promise<T[]> {
  return (await client.query({ name: named(text), text, values })).rows as T[];
}

const iso = (v: string | null) => (v == null ? null : new Date(v).toISOString());

/** Rolls the transaction back and hands the checkout to the ORM path. */
class NotCommon extends Error {}

/**
 * `fulfilCheckout` of the common checkout; `null` when it is not one (nothing written: the caller runs
 * the ORM path, which also answers retries of a committed fulfilment).
 */
export async function fulfilCheckoutInSql(
  em: EntityManager,
  checkoutId: string,
  opts: { processor: string; publicUrl: string; beforeCommit?: () => void },
): Promise<PlainFulfilResult | null> {
  if (!enabled) return null;
  const pool = await (em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
  const client = await pool.connect();
  let open = false;
  try {
    await client.query('begin');
    open = true;
    const result = await fulfilIn(em, client, checkoutId, opts);
    opts.beforeCommit?.();
    await client.query('commit');
    open = false;
    plainSqlFulfilmentStats.used++;
    return result;
  } catch (err) {
    if (open) await client.query('rollback');
    open = false;
    if (err instanceof NotCommon) return null;
    throw err;
  } finally {
    client.release();
  }
}

async function fulfilIn(
  em: EntityManager,
  client: PoolClient,
  checkoutId: string,
  opts: { processor: string; publicUrl: string },
): Promise<PlainFulfilResult> {
  const [r] = await q<ReadRow>(client, readSqlText(), [checkoutId]);
  if (!r) throw new NotCommon();
  const benefitRows = r.benefits;
  const common =
    r.c.status === 'confirmed' &&
    !r.has_order &&
    r.c.subscription_id == null &&
    r.c.discount_id == null &&
    r.p.recurring_interval == null &&
    r.pp.meter_id == null &&
    r.cu.deleted_at == null &&
    benefitRows.every((b) => PLAIN_TYPES.has(b.type as string));
  if (!common) throw new NotCommon();
  const all = r.products ?? [];
  const product = all.find((x) => x.id === r.c.product_id);
  if (!product) throw new NotCommon();
  const read = {
    products: all.filter((x) => x.ord !== null).sort((a, b) => Number(a.ord) - Number(b.ord)).map((x) => x.product),
    product: product.product,
  };

  const customerId = r.cu.id as string;
  await q(client, LOCK_CUSTOMER_SQL, [customerId]);
  const card = (r.c.processor_payment_method as ProcessorPaymentMethod | null) ?? null;
  const [s] = await q<StateRow>(client, STATE_SQL, [customerId, opts.processor, card?.id ?? null]);
  // The state of a customer with an active subscription carries its read model and meters: the ORM path builds it.
  if (!s || s.has_subscriptions) throw new NotCommon();

  // The rows as plain objects of the entities' shape (plain-rows.ts): the serializers of the ORM path build the events.
  const o = plainOf<Organization>(em, Organization, r.o);
  const p = plainOf<Product>(em, Product, r.p);
  const price = plainOf<ProductPrice>(em, ProductPrice, r.pp, { product: p });
  const customer = plainOf<Customer>(em, Customer, r.cu);
  const c = plainOf<Checkout>(em, Checkout, r.c, { organization: o, product: p, productPrice: price, customer });
  const benefits = benefitRows.map((b) => plainOf<Benefit>(em, Benefit, b));

  const now = new Date();
  const total = c.totalAmount ?? 0;
  const order = {
    id: randomUUID(),
    createdAt: now,
    modifiedAt: null,
    organization: o,
    customer,
    product: p,
    productPrice: price,
    discount: null,
    subscription: null,
    checkout: c,
    status: c.processorChargeId || total === 0 ? 'paid' : 'pending',
    billingReason: 'purchase',
    subtotalAmount: c.amount ?? 0,
    discountAmount: c.discountAmount ?? 0,
    netAmount: c.netAmount ?? 0,
    taxAmount: c.taxAmount ?? 0,
    totalAmount: total,
    refundedAmount: 0,
    refundedTaxAmount: 0,
    currency: c.currency ?? price.priceCurrency,
    billingAddress: c.customerBillingAddress ?? null,
    customFieldData: { ...c.customFieldData },
    metadata: { ...c.metadata },
    processorChargeId: c.processorChargeId ?? null,
    lines: null,
  } as unknown as Order;

  const keys: Json[] = [];
  const grants = benefits.map((benefit) => {
    let properties: Json = {};
    if (benefit.type === 'license_keys') {
      const props = benefit.properties as unknown as LicenseKeysBenefitProperties;
      const key = generateLicenseKey(props.prefix);
      const limits = licenseKeyLimits(props, now);
      const id = randomUUID();
      keys.push({
        id,
        organization_id: benefit.organization.id,
        customer_id: customerId,
        benefit_id: benefit.id,
        key,
        display_key: displayKey(key),
        limit_activations: limits.limitActivations,
        limit_usage: limits.limitUsage,
        expires_at: limits.expiresAt?.toISOString() ?? null,
      });
      properties = { license_key_id: id, display_key: displayKey(key) };
    }
    const grant = { id: randomUUID(), createdAt: now, modifiedAt: null, customer, benefit, subscriptionId: null, orderId: order.id, grantedAt: now, revokedAt: null, properties };
    return grant as unknown as BenefitGrant;
  });

  c.status = 'succeeded';
  c.modifiedAt = now;
  const orgId = c.organization.id;
  const events: { id: string; organization_id: string; type: WebhookEventType; data: Json }[] = [];
  const emit = (type: WebhookEventType, data: Json) => events.push({ id: randomUUID(), organization_id: orgId, type, data });
  const orderData = serializeOrderWithProduct(order, read.product) as unknown as Json;
  emit('order.created', orderData);
  if (order.status === 'paid') emit('order.paid', orderData);
  for (const g of grants) {
    emit('benefit_grant.created', { ...serializeBenefitGrant(g), benefit: serializeBenefit(g.benefit), previous_properties: null });
  }
  emit('checkout.updated', serializeCheckoutWithProducts(c, opts.publicUrl, read) as unknown as Json);
  const granted = [
    ...s.grants.map((g) => ({ ...g, created_at: iso(g.created_at)!, modified_at: iso(g.modified_at), granted_at: iso(g.granted_at)! })),
    ...grants.map((g) => ({
      id: g.id,
      created_at: now.toISOString(),
      modified_at: null,
      granted_at: now.toISOString(),
      benefit_id: g.benefit.id,
      benefit_type: g.benefit.type,
      properties: g.properties,
    })),
  ].sort((a, b) => (a.granted_at < b.granted_at ? -1 : a.granted_at > b.granted_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  emit('customer.state_changed', { ...serializeCustomer(customer), active_meters: [], active_subscriptions: [], granted_benefits: granted });

  const paymentMethods =
    card && !s.pm_id
      ? [{
          id: randomUUID(),
          customer_id: customerId,
          processor: opts.processor,
          processor_id: card.id,
          brand: card.brand,
          last4: card.last4,
          exp_month: card.expMonth,
          exp_year: card.expYear,
          wallet: card.wallet ?? null,
          is_default: !s.has_default,
        }]
      : [];
  const orderRow = {
    id: order.id,
    organization_id: orgId,
    customer_id: customerId,
    product_id: p.id,
    product_price_id: order.productPrice.id,
    status: order.status,
    subtotal_amount: order.subtotalAmount,
    discount_amount: order.discountAmount,
    net_amount: order.netAmount,
    tax_amount: order.taxAmount,
    total_amount: order.totalAmount,
    currency: order.currency,
    billing_address: order.billingAddress,
    custom_field_data: order.customFieldData,
    metadata: order.metadata,
    processor_charge_id: order.processorChargeId,
  };
  const grantRows = grants.map((g) => ({ id: g.id, customer_id: customerId, benefit_id: g.benefit.id, properties: g.properties }));
  const [w] = await q<{ n: number }>(client, WRITE_SQL, [
    c.id,
    now,
    JSON.stringify(paymentMethods),
    JSON.stringify(orderRow),
    JSON.stringify(keys),
    JSON.stringify(grantRows),
    JSON.stringify(events),
  ]);
  if (w?.n !== 1) throw new NotCommon();
  return {
    orderId: order.id,
    subscriptionId: null,
    customerId,
    productId: p.id,
    externalBenefitIds: [],
    externalRevokeBenefitIds: [],
    upgraded: false,
    succeeded: true,
    created: true,
    receipt: receiptOf(order),
  };
}
