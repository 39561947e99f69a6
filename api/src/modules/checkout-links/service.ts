/** Checkout link rules. Services never commit on their own: the caller's transaction does. */
import type { EntityManager } from '../../kit/db.ts';
import { randomToken } from '../../kit/crypto.ts';
import { RequestValidationError, ResourceNotFound, fieldError, type ValidationIssue } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { Organization } from '../organizations/entities.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { Product, ProductPrice } from '../products/entities.ts';
import { PRODUCT_POPULATE } from '../products/schemas.ts';
import { Discount } from '../discounts/entities.ts';
import { CheckoutLink } from './entities.ts';
import type { CheckoutLinkCreate, CheckoutLinkUpdate } from './schemas.ts';
import { trialColumns, trialFromInput } from '../trials/index.ts';
import type { Checkout } from '../checkouts/entities.ts';
import { createCheckoutFromLink, type LinkPrefill } from '../checkouts/service.ts';

export const CHECKOUT_LINK_SECRET_PREFIX = 'polar_cl_';
/** Everything `serializeCheckoutLink` reads: each product's read model, the discount, the chosen price. */
export const CHECKOUT_LINK_POPULATE = [
  ...PRODUCT_POPULATE.map((path) => `products.${path}` as const),
  'discount',
  'productPrice',
] as const;

export async function getVisibleCheckoutLink(em: EntityManager, principal: Principal, id: string): Promise<CheckoutLink> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const link = await em.findOne(
    CheckoutLink,
    { id, organization: { $in: orgIds }, deletedAt: null },
    { populate: CHECKOUT_LINK_POPULATE },
  );
  if (!link) throw ResourceNotFound('Checkout link not found');
  return link;
}

/** A live checkout link by its client secret (for the public redirect, once checkouts exist). */
export async function findCheckoutLinkBySecret(em: EntityManager, clientSecret: string): Promise<CheckoutLink | null> {
  return em.findOne(CheckoutLink, { clientSecret, deletedAt: null }, { populate: CHECKOUT_LINK_POPULATE });
}

/**
 * Products offered by a link: visible to the caller, not archived, all of one organization (and of
 * `organizationId` when given). Problems are 422 on `loc`.
 */
async function resolveProducts(
  em: EntityManager,
  orgIds: string[],
  ids: string[],
  loc: (string | number)[],
  organizationId?: string,
): Promise<Product[]> {
  const unique = [...new Set(ids)];
  const found = await em.find(Product, { id: { $in: unique }, organization: { $in: orgIds } });
  const byId = new Map(found.map((p) => [p.id, p]));
  const issues: ValidationIssue[] = [];
  const at = (i: number) => (loc[loc.length - 1] === 'products' ? [...loc, i] : loc);
  ids.forEach((id, i) => {
    const p = byId.get(id);
    if (!p) issues.push({ type: 'value_error', loc: at(i), msg: 'Product not found.', input: id });
    else if (p.isArchived) issues.push({ type: 'value_error', loc: at(i), msg: 'Product is archived.', input: id });
  });
  if (issues.length) throw new RequestValidationError(issues);
  const products = unique.map((id) => byId.get(id)!);
  const org = organizationId ?? products[0]!.organization.id;
  const other = ids.findIndex((id) => byId.get(id)!.organization.id !== org);
  if (other >= 0) throw fieldError(at(other), 'All products must belong to the same organization.', 'value_error', ids[other]);
  return products;
}

async function resolveDiscount(em: EntityManager, organizationId: string, id: string): Promise<Discount> {
  const d = await em.findOne(Discount, { id, organization: organizationId, deletedAt: null });
  if (!d) throw fieldError(['body', 'discount_id'], 'Discount not found.', 'value_error', id);
  return d;
}

/** Creates a link in the caller's transaction; answered with everything its read model shows. */
export async function createCheckoutLink(em: EntityManager, principal: Principal, input: CheckoutLinkCreate): Promise<CheckoutLink> {
  const orgIds = await visibleOrganizationIds(em, principal);
  let products: Product[];
  let price: ProductPrice | null = null;
  if (input.product_price_id) {
    price = await em.findOne(
      ProductPrice,
      { id: input.product_price_id, product: { organization: { $in: orgIds } } },
      { populate: ['product'] },
    );
    if (!price) throw fieldError(['body', 'product_price_id'], 'Price not found.', 'value_error', input.product_price_id);
    if (price.isArchived || price.product.isArchived) {
      throw fieldError(['body', 'product_price_id'], 'Price is archived.', 'value_error', input.product_price_id);
    }
    products = [price.product];
  } else if (input.product_id) {
    products = await resolveProducts(em, orgIds, [input.product_id], ['body', 'product_id']);
  } else {
    products = await resolveProducts(em, orgIds, input.products!, ['body', 'products']);
  }
  const organizationId = products[0]!.organization.id;
  const trial = linkTrial(input, products);
  const discount = input.discount_id ? await resolveDiscount(em, organizationId, input.discount_id) : null;
  const link = em.create(CheckoutLink, {
    organization: em.getReference(Organization, organizationId),
    clientSecret: randomToken(CHECKOUT_LINK_SECRET_PREFIX, 32),
    paymentProcessor: input.payment_processor,
    label: input.label ?? null,
    allowDiscountCodes: input.allow_discount_codes,
    discount,
    successUrl: input.success_url ?? null,
    ...trialColumns(trial ?? null),
    metadata: input.metadata ?? {},
    productPrice: price,
    deletedAt: null,
  });
  for (const p of products) link.products.add(p);
  return flushed(em, link);
}

async function flushed(em: EntityManager, link: CheckoutLink): Promise<CheckoutLink> {
  await em.flush();
  await em.populate(link, CHECKOUT_LINK_POPULATE);
  return link;
}

/** Changes a link the principal can see (404 otherwise), in the caller's transaction. */
export async function updateCheckoutLink(em: EntityManager, principal: Principal, id: string, input: CheckoutLinkUpdate): Promise<CheckoutLink> {
  const link = await getVisibleCheckoutLink(em, principal, id);
  const organizationId = link.organization.id;
  const products =
    input.products != null
      ? await resolveProducts(em, [organizationId], input.products, ['body', 'products'], organizationId)
      : null;
  const trial = linkTrial(input, products ?? link.products.getItems());
  if (trial !== undefined) Object.assign(link, trialColumns(trial));
  if (input.discount_id) link.discount = await resolveDiscount(em, organizationId, input.discount_id);
  else if (input.discount_id === null) link.discount = null;
  if (products) {
    link.products.set(products);
    if (link.productPrice && !products.some((p) => p.id === link.productPrice!.product.id)) link.productPrice = null;
  }
  if (input.label !== undefined) link.label = input.label;
  if (input.allow_discount_codes != null) link.allowDiscountCodes = input.allow_discount_codes;
  if (input.success_url !== undefined) link.successUrl = input.success_url;
  if (input.metadata != null) link.metadata = input.metadata;
  return flushed(em, link);
}

/** A link's trial: its products must all be recurring (422 at `trial_interval` otherwise). */
function linkTrial(input: Parameters<typeof trialFromInput>[0], products: Product[]) {
  const errors: ValidationIssue[] = [];
  const trial = trialFromInput(input, products.every((p) => p.recurringInterval != null), errors);
  if (errors.length) throw new RequestValidationError(errors);
  return trial;
}

/** Soft delete of a link the principal can see (404 otherwise): its secret no longer starts checkouts. */
export async function deleteCheckoutLink(em: EntityManager, principal: Principal, id: string): Promise<void> {
  const link = await getVisibleCheckoutLink(em, principal, id);
  link.deletedAt = new Date();
  await em.flush();
}

/** A new checkout from the live link with this secret (404 when there is none); null when it has no product available. */
export async function createCheckoutFromLinkSecret(
  tx: EntityManager,
  clientSecret: string,
  prefill: LinkPrefill,
  options: { ttlSeconds: number },
): Promise<Checkout | null> {
  const link = await findCheckoutLinkBySecret(tx, clientSecret);
  if (!link) throw ResourceNotFound('Checkout link not found');
  return createCheckoutFromLink(tx, link, prefill, options);
}
