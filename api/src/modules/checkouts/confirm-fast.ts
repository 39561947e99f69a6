/**
 * The confirmation's step 1 (confirm.ts `prepare`) for the common checkout, without a transaction:
 * one read and, when the buyer changed something, one guarded `UPDATE` (the ORM path is begin, the
 * lock, populate and lookups, its flush, commit). The read takes the checkout's row `FOR UPDATE OF c
 * NOWAIT` for its own duration only (a confirmation holding the row in its transaction makes this one
 * a 409, as before; tests/unit/row-locks.test.ts) and returns it with its product, price and
 * organization, whether an order exists, the held redemption, the organization's customer with the
 * buyer's email, the checkout's product list, the organization's tax rates (`knownTaxRates`: the
 * recompute asks no query), the product's read model and the row versions (`xmin`) the writes are
 * guarded by. The rows become entities of the request's entity manager (`em.map`, as the ORM path's
 * transaction leaves them there for step 3), and the same rules run on them as on the ORM path
 * (`updateCheckout`, `requireConfirmFields`, `assertNoActiveSubscription`). The checkout's change is
 * the ORM's own change set (the columns and values its flush would write), written by one `UPDATE`
 * only if the row is still the version read (`writeChange`); another writer in between makes it a 409
 * and writes nothing. Step 3's statement is then guarded by the version that `UPDATE` returns
 * (confirm-commit-sql.ts).
 *
 * Common means what these rows answer without another read: one product, a fixed, free or custom
 * price, no discount, no trial, no custom fields, no customer or upgraded subscription tied to the
 * checkout, and a buyer's change of name, email, billing address or tax id only. Anything else (and
 * an expired, refunded or not-open checkout, whose refusal the ORM path words) answers `null` with
 * nothing mapped or written, and the caller runs the ORM path in its transaction.
 * tests/confirm/confirm-fast.test.ts compares both on identical input.
 */
import type { EntityManager } from '../../kit/db.ts';
import { ResourceAlreadyExists } from '../../kit/errors.ts';
import { ReferenceKind, helper } from '@mikro-orm/core';
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
  /** The checkout row's version (`xmin`) step 1 left: step 3's write is guarded by it (confirm-commit-sql.ts). */
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
 * Writes the checkout's pending change (the ORM's change set: what its flush would write, `onUpdate`
 * values included) in one `UPDATE` guarded by the row's version `version`, and marks the entity clean.
 * Answers the row's new version, `version` when nothing changed, or null when the row is no longer
 * that version (nothing written).
 */
async function writeChange(em: EntityManager, checkout: Checkout, version: string): Promise<string | null> {
  const uow = em.getUnitOfWork();
  uow.computeChangeSet(checkout);
  const cs = uow.getChangeSets().find((x) => x.entity === checkout);
  const keys = Object.keys(cs?.payload ?? {});
  if (!cs || keys.length === 0) return version;
  const meta = helper(checkout).__meta;
  const sets: string[] = [];
  const values: unknown[] = [];
  for (const key of keys) {
    const prop = meta.properties[key as keyof typeof meta.properties];
    // The common path changes the buyer's scalar columns and the amounts only.
    if (!prop || prop.kind !== ReferenceKind.SCALAR || prop.fieldNames.length !== 1) throw new Error(`confirm-fast: unexpected change of checkout.${key}`);
    const v = (cs.payload as Record<string, unknown>)[key];
    sets.push(`"${prop.fieldNames[0]}" = ?`);
    values.push(v != null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v) ? JSON.stringify(v) : v);
  }
  const rows = await em.execute<{ version: string }[]>(
    `update checkouts set ${sets.join(', ')} where id = ? and xmin = ?::text::xid returning xmin::text as version`,
    [...values, checkout.id, version],
  );
  return rows[0]?.version ?? null;
}

/**
 * Step 1 of the common confirmation, outside any transaction; `null` when the checkout is not the
 * common case (nothing written or mapped: the caller's ORM path decides).
 */
export async function prepareCommon(em: EntityManager, clientSecret: string, input: CheckoutConfirm): Promise<FastPrepared | null> {
  if (!enabled || !clientSecret.startsWith(CHECKOUT_SECRET_PREFIX) || !simpleInput(input)) return null;
  let rows: Row[];
  try {
    rows = await em.execute<Row[]>(
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

  em.map(Organization, r.o);
  const product = em.map(Product, r.p);
  em.map(ProductPrice, r.pp);
  const checkout = em.map(Checkout, c);
  confirmFastPathStats.used++;
  // What these rows showed: the product has no custom fields, and it is the checkout's only product.
  product.attachedCustomFields.hydrate([]);
  checkout.products.hydrate([product]);
  const customer = r.by_email ? em.map(Customer, r.by_email) : null;
  // The rate of the buyer's country comes from the rows above (the recompute below asks for it).
  knownTaxRates(em, checkout.organization.id, r.tax_rates);

  const { confirmation_token_id: tokenId, ...update } = input;
  const modifiedBefore = checkout.modifiedAt?.getTime() ?? null;
  await updateCheckout(em, checkout, update, 'public');
  requireConfirmFields(checkout, tokenId);
  await assertNoActiveSubscription(em, checkout, customer);
  const version = await writeChange(em, checkout, r.version);
  if (version == null) throw ResourceAlreadyExists('The checkout changed during confirmation; retry.');
  const changed = (checkout.modifiedAt?.getTime() ?? null) !== modifiedBefore;
  return {
    checkout,
    customer,
    customerVersion: r.by_email_version,
    changed,
    productIds: r.product_ids,
    version,
    products: { products: [r.product_json], product: r.product_json },
  };
}
