/**
 * `POST /v1/checkouts/` in two statements instead of the ORM's transaction of seven: the same rules
 * (`createCheckout`, on a fork of the request's entity manager that is never flushed) run on the one
 * read that also answers the products' read models (`loadRuleProducts` with `reads`), then ONE guarded
 * statement inserts the checkout, its `checkout_products` rows and the `checkout.created` event, only
 * if the chosen product and price are still live. It is its own transaction, all of it or nothing (an
 * exception to "one transaction owner", as `confirm-commit-sql.ts`); the answer is built before it
 * from the same serializer as the ORM path (`commit.ts`). Every refusal is thrown by the rules before
 * anything is written, so it is the ORM path's. When the guard does not hold (the product or price was
 * archived or deleted meanwhile) nothing is written and the caller runs the ORM path, which words the
 * refusal. tests/checkouts/create-sql.test.ts creates checkouts on both paths from identical input and
 * compares the answers, the rows and the events.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import type { Principal } from '../../kit/principals.ts';
import type { ProductRead } from '../products/schemas.ts';
import type { Checkout } from './entities.ts';
import { serializeCheckoutWithProducts, type CheckoutCreate, type CheckoutOut } from './schemas.ts';
import { createCheckout } from './service.ts';

/** Off: every creation takes the ORM path (the equivalence test compares both). */
let enabled = true;
export function setCreateSqlPath(on: boolean): void {
  enabled = on;
}

/** How many creations this process wrote with the statement (the equivalence test checks which path ran). */
export const createSqlStats = { used: 0 };

const COLUMNS = [
  'id', 'created_at', 'modified_at', 'organization_id', 'status', 'client_secret', 'expires_at', 'payment_processor',
  'payment_processor_metadata', 'product_id', 'product_price_id', 'amount', 'discount_amount', 'net_amount', 'tax_amount',
  'total_amount', 'currency', 'is_discount_applicable', 'is_free_product_price', 'is_payment_required',
  'is_payment_setup_required', 'is_payment_form_required', 'discount_id', 'allow_discount_codes', 'custom_field_data',
  'customer_id', 'customer_external_id', 'customer_name', 'customer_email', 'customer_ip_address',
  'customer_billing_address', 'customer_tax_id', 'customer_metadata', 'metadata', 'success_url', 'embed_origin',
  'subscription_id', 'processor_charge_id', 'processor_payment_method', 'charge_attempt', 'trial_interval',
  'trial_interval_count', 'active_trial_interval', 'active_trial_interval_count',
] as const;
const JSON_COLUMNS = new Set(['payment_processor_metadata', 'custom_field_data', 'customer_billing_address', 'customer_metadata', 'metadata', 'processor_payment_method']);
const n = COLUMNS.length;

const WRITE_SQL = `with ck as (
    insert into checkouts (${COLUMNS.join(', ')})
    select ${COLUMNS.map((col, i) => `$${i + 1}${JSON_COLUMNS.has(col) ? '::jsonb' : ''}`).join(', ')}
     where exists (select 1 from products p where p.id = $10 and p.organization_id = $4 and not p.is_archived)
       and exists (select 1 from product_prices pp where pp.id = $11 and pp.product_id = $10 and not pp.is_archived)
    returning id
  ), cp as (
    insert into checkout_products (checkout_id, product_id)
    select ck.id, x.product_id from ck cross join unnest($${n + 1}::uuid[]) with ordinality as x(product_id, k) order by x.k
  ), ev as (
    insert into outbox_events (id, created_at, modified_at, organization_id, type, data, dispatched_at)
    select $${n + 2}, $${n + 4}::timestamptz, null, $4, 'checkout.created', $${n + 3}::jsonb, null from ck
  )
  select (select count(*) from ck)::int as written`;

/** The checkout's row as the ORM's INSERT writes it (its defaults included). */
function rowValues(c: Checkout): unknown[] {
  const json = (v: unknown) => (v == null ? null : JSON.stringify(v));
  const byColumn: Record<(typeof COLUMNS)[number], unknown> = {
    id: c.id,
    created_at: c.createdAt,
    modified_at: c.modifiedAt ?? null,
    organization_id: c.organization.id,
    status: c.status ?? 'open',
    client_secret: c.clientSecret,
    expires_at: c.expiresAt,
    payment_processor: c.paymentProcessor ?? 'stripe',
    payment_processor_metadata: c.paymentProcessorMetadata,
    product_id: c.product.id,
    product_price_id: c.productPrice.id,
    amount: c.amount ?? null,
    discount_amount: c.discountAmount ?? null,
    net_amount: c.netAmount ?? null,
    tax_amount: c.taxAmount ?? null,
    total_amount: c.totalAmount ?? null,
    currency: c.currency ?? null,
    is_discount_applicable: c.isDiscountApplicable ?? false,
    is_free_product_price: c.isFreeProductPrice ?? false,
    is_payment_required: c.isPaymentRequired ?? false,
    is_payment_setup_required: c.isPaymentSetupRequired ?? false,
    is_payment_form_required: c.isPaymentFormRequired ?? false,
    discount_id: c.discount?.id ?? null,
    allow_discount_codes: c.allowDiscountCodes ?? true,
    custom_field_data: c.customFieldData,
    customer_id: c.customer?.id ?? null,
    customer_external_id: c.customerExternalId ?? null,
    customer_name: c.customerName ?? null,
    customer_email: c.customerEmail ?? null,
    customer_ip_address: c.customerIpAddress ?? null,
    customer_billing_address: c.customerBillingAddress ?? null,
    customer_tax_id: c.customerTaxId ?? null,
    customer_metadata: c.customerMetadata,
    metadata: c.metadata,
    success_url: c.successUrl ?? null,
    embed_origin: c.embedOrigin ?? null,
    subscription_id: c.subscriptionId ?? null,
    processor_charge_id: c.processorChargeId ?? null,
    processor_payment_method: c.processorPaymentMethod ?? null,
    charge_attempt: c.chargeAttempt ?? 0,
    trial_interval: c.trialInterval ?? null,
    trial_interval_count: c.trialIntervalCount ?? null,
    active_trial_interval: c.activeTrialInterval ?? null,
    active_trial_interval_count: c.activeTrialIntervalCount ?? null,
  };
  return COLUMNS.map((col) => (JSON_COLUMNS.has(col) ? json(byColumn[col]) : byColumn[col]));
}

/** Runs the statement as a named prepared statement (planned once per connection). */
async function run(em: EntityManager, values: unknown[]): Promise<number> {
  const pool = await (em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
  const r = await pool.query<{ written: number }>({ name: 'checkout_create', text: WRITE_SQL, values });
  return r.rows[0]?.written ?? 0;
}

const isForeignKeyViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23503';

/**
 * The seller's new checkout and its read model, written by the statement (see the file comment); null
 * when switched off or when the guard did not hold (nothing written: the caller runs the ORM path).
 * A refused input throws the rules' error, as the ORM path does.
 */
export async function createCheckoutSql(
  em: EntityManager,
  deps: Pick<Deps, 'cfg'>,
  principal: Principal,
  body: CheckoutCreate,
): Promise<CheckoutOut | null> {
  if (!enabled) return null;
  const fork = em.fork();
  const reads = new Map<string, ProductRead>();
  const c = await createCheckout(fork, principal, body, { ttlSeconds: deps.cfg.CHECKOUT_TTL_SECONDS, productReads: reads });
  const listed = c.products.getItems().map((p) => p.id);
  const read = (id: string) => {
    const p = reads.get(id);
    if (!p) throw new Error(`checkout ${c.id}: no read model of product ${id}`);
    return p;
  };
  const out = serializeCheckoutWithProducts(c, deps.cfg.PUBLIC_URL, { products: listed.map(read), product: read(c.product.id) });
  let written: number;
  try {
    written = await run(fork, [...rowValues(c), listed, randomUUID(), JSON.stringify(out), new Date()]);
  } catch (err) {
    if (isForeignKeyViolation(err)) return null;
    throw err;
  }
  fork.clear();
  if (written !== 1) return null;
  createSqlStats.used++;
  return out;
}
