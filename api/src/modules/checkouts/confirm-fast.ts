/**
 * The confirmation's step 1 (confirm.ts `prepare`) for the common checkout, with one statement instead
 * of the ORM's lock, populate and lookups: the checkout's row locked `FOR UPDATE OF c NOWAIT` (only the
 * checkout's row: tests/unit/row-locks.test.ts) read with its product, price and organization, whether
 * an order exists, the held redemption, the organization's customer with the buyer's email, the
 * checkout's product list, the organization's tax rates (`knownTaxRates`: the recompute asks no
 * query), the product's read model and the row versions step 3's statement is guarded by
 * (confirm-commit-sql.ts). The rows become entities of the transaction (`em.map`), and the same rules
 * run on them as on the ORM path (`updateCheckout`, `requireConfirmFields`, `assertNoActiveSubscription`);
 * the checkout's change is written by the same flush.
 *
 * Common means what these rows answer without another read: one product, a fixed, free or custom
 * price, no discount, no trial, no custom fields, no customer or upgraded subscription tied to the
 * checkout, and a buyer's change of name, email, billing address or tax id only. Anything else (and
 * an expired, refunded or not-open checkout, whose refusal the ORM path words) answers `null` with
 * nothing mapped, and the caller's ORM path continues in the same transaction (the row stays locked). tests/confirm/confirm-fast.test.ts compares both on identical input.
 */
import type { EntityManager } from '../../kit/db.ts';
import { ResourceAlreadyExists } from '../../kit/errors.ts';
import { Customer } from '../customers/entities.ts';
import { Organization } from '../organizations/entities.ts';
import { Product, ProductPrice } from '../products/entities.ts';
import { Checkout } from './entities.ts';
import type { CheckoutConfirm } from './schemas.ts';
import { CHECKOUT_SECRET_PREFIX, updateCheckout } from './service.ts';
import { knownTaxRates } from '../pricing/terms.ts';
import { productJsonSql } from '../products/read-sql.ts';
import type { ProductRead } from '../products/schemas.ts';
import type { CheckoutProductsRead } from './schemas.ts';
import { assertNoActiveSubscription, requireConfirmFields } from './buyer.ts';

type Json = Record<string, unknown>;

interface Row {
  c: Json;
  p: Json;
  pp: Json;
  o: Json;
  has_order: boolean;
  held: boolean;
  has_fields: boolean;
  product_ids: string[];
  by_email: Json | null;
  by_email_version: string | null;
  version: string;
  tx_version: string;
  tax_rates: Record<string, number>;
  product_json: ProductRead;
}

/** Off: every confirmation takes the ORM path (the equivalence test compares both). */
let enabled = true;
export function setConfirmFastPath(on: boolean): void {
  enabled = on;
}

/** How many confirmations this process took on the common path, refused ones included (the equivalence test checks which path ran). */
export const confirmFastPathStats = { used: 0 };

/** What step 1 answers (confirm.ts `Prepared`), without the fields confirm.ts adds. */
export interface FastPrepared {
  checkout: Checkout;
  customer: Customer | null;
  /** The customer row's version (`xmin`) as read. */
  customerVersion: string | null;
  changed: boolean;
  productIds: string[];
  /** The checkout row's version (`xmin`) once this transaction commits: step 3's write is guarded by it (confirm-commit-sql.ts). */
  version: string;
  /** The read models of the checkout's one product, read with the row. */
  products: CheckoutProductsRead;
}

/** The buyer's change touches only fields the rows answer (no product, price, amount, discount code or custom field data). */
function simpleInput(input: CheckoutConfirm): boolean {
  return !input.product_id && !input.product_price_id && input.amount == null && input.custom_field_data == null && input.discount_code === undefined;
}

function isLockNotAvailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '55P03' || /could not obtain lock/i.test(String(e?.message ?? ''));
}

/**
 * Step 1 of the common confirmation inside the caller's transaction `tx`; `null` when the checkout
 * is not the common case (nothing written or mapped: the caller's ORM path decides).
 */
export async function prepareCommon(tx: EntityManager, clientSecret: string, input: CheckoutConfirm): Promise<FastPrepared | null> {
  if (!enabled || !clientSecret.startsWith(CHECKOUT_SECRET_PREFIX) || !simpleInput(input)) return null;
  let rows: Row[];
  try {
    rows = await tx.execute<Row[]>(
      `select to_jsonb(c) as c, to_jsonb(p) as p, to_jsonb(pp) as pp, to_jsonb(o) as o,
              exists (select 1 from orders x where x.checkout_id = c.id) as has_order,
              exists (select 1 from discount_redemptions r where r.checkout_id = c.id) as held,
              exists (select 1 from product_custom_fields f where f.product_id = c.product_id) as has_fields,
              array(select cp.product_id from checkout_products cp where cp.checkout_id = c.id order by cp.id) as product_ids,
              (select to_jsonb(cu) from customers cu
                where cu.organization_id = c.organization_id and cu.deleted_at is null
                  and cu.email = case when ?::boolean then ? else c.customer_email end
                limit 1) as by_email,
              (select cu.xmin::text from customers cu
                where cu.organization_id = c.organization_id and cu.deleted_at is null
                  and cu.email = case when ?::boolean then ? else c.customer_email end
                limit 1) as by_email_version,
              c.xmin::text as version,
              (pg_current_xact_id()::text::bigint % 4294967296)::text as tx_version,
              coalesce((select jsonb_object_agg(t.country, t.basis_points) from tax_rates t where t.organization_id = c.organization_id), '{}') as tax_rates,
              ${productJsonSql('c.product_id')} as product_json
         from checkouts c
         join products p on p.id = c.product_id
         join product_prices pp on pp.id = c.product_price_id
         join organizations o on o.id = c.organization_id
        where c.client_secret = ?
        for update of c nowait`,
      [input.customer_email !== undefined, input.customer_email ?? null, input.customer_email !== undefined, input.customer_email ?? null, clientSecret],
    );
  } catch (err) {
    if (isLockNotAvailable(err)) throw ResourceAlreadyExists('This checkout is already being confirmed.');
    throw err;
  }
  const r = rows[0];
  if (!r) return null;
  const c = r.c;
  const common =
    c.status === 'open' &&
    !r.has_order &&
    !r.held &&
    !r.has_fields &&
    c.discount_id == null &&
    c.customer_id == null &&
    c.subscription_id == null &&
    c.trial_interval == null &&
    c.active_trial_interval == null &&
    r.p.trial_interval == null &&
    ['fixed', 'free', 'custom'].includes(r.pp.amount_type as string) &&
    Object.keys((c.custom_field_data as Json | null) ?? {}).length === 0 &&
    r.product_ids.length === 1 &&
    r.product_ids[0] === c.product_id &&
    (r.by_email != null || c.customer_external_id == null) &&
    new Date(c.expires_at as string).getTime() > Date.now();
  if (!common) return null;

  tx.map(Organization, r.o);
  const product = tx.map(Product, r.p);
  tx.map(ProductPrice, r.pp);
  const checkout = tx.map(Checkout, c);
  confirmFastPathStats.used++;
  // What these rows showed: the product has no custom fields, and it is the checkout's only product.
  product.attachedCustomFields.hydrate([]);
  checkout.products.hydrate([product]);
  const customer = r.by_email ? tx.map(Customer, r.by_email) : null;
  // The rate of the buyer's country comes from the rows above (the recompute below asks for it).
  knownTaxRates(tx, checkout.organization.id, r.tax_rates);

  const { confirmation_token_id: tokenId, ...update } = input;
  const modifiedBefore = checkout.modifiedAt?.getTime() ?? null;
  await updateCheckout(tx, checkout, update, 'public');
  requireConfirmFields(checkout, tokenId);
  await assertNoActiveSubscription(tx, checkout, customer);
  await tx.flush();
  const changed = (checkout.modifiedAt?.getTime() ?? null) !== modifiedBefore;
  return {
    checkout,
    customer,
    customerVersion: r.by_email_version,
    changed,
    productIds: r.product_ids,
    // The flush wrote the row (its modified_at moved) in this transaction, whose id becomes its xmin.
    version: changed ? r.tx_version : r.version,
    products: { products: [r.product_json], product: r.product_json },
  };
}
