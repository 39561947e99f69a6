/**
 * Checkout rules, up to (not including) confirmation. Services never commit on their own: the
 * caller's transaction does. Every amount comes from the pricing module (`checkoutAmounts`),
 * recomputed whenever the price, requested amount, discount or billing country changes.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { randomToken } from '../../kit/crypto.ts';
import { ApiError, RequestValidationError, ResourceNotFound, fieldError, type ValidationIssue } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { Organization } from '../organizations/entities.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { Product, ProductPrice } from '../products/entities.ts';
import { Discount } from '../discounts/entities.ts';
import { Customer } from '../customers/entities.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES, Subscription } from '../subscriptions/entities.ts';
import type { CheckoutLink } from '../checkout-links/entities.ts';
import { Checkout } from './entities.ts';
import { loadRuleProducts } from './product-reads.ts';
import type { ProductRead } from '../products/schemas.ts';
import { trialColumns, trialFromInput } from '../trials/index.ts';
import { CHECKOUT_POPULATE, effectiveStatus, type CheckoutCreate, type CheckoutUpdate, type CheckoutUpdatePublic } from './schemas.ts';
import { appliesTo, defaultPrice, discountByCode, discountById, notRedeemable, recompute, validateDiscount } from './amounts.ts';
import { keepAnswersFor, validateCustomFieldData } from './custom-field-data.ts';

export const CHECKOUT_SECRET_PREFIX = 'polar_c_';

type Loc = (string | number)[];

export const NotOpenCheckout = (detail = 'Checkout is not open.') => new ApiError(403, 'NotOpenCheckout', detail);

export function isOpen(c: Checkout, now = new Date()): boolean {
  return effectiveStatus(c, now) === 'open';
}

// ---------------------------------------------------------------------------------------------
// Lookups

export async function getVisibleCheckout(
  em: EntityManager,
  principal: Principal,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<Checkout> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const c = await em.findOne(
    Checkout,
    { id, organization: { $in: orgIds } },
    opts.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  if (!c) throw ResourceNotFound('Checkout not found');
  await em.populate(c, CHECKOUT_POPULATE);
  return c;
}

/**
 * A checkout by its client secret (a unique-index lookup), unless expired: expired checkouts and
 * unknown secrets are the same 404.
 */
export async function getCheckoutBySecret(
  em: EntityManager,
  clientSecret: string,
  opts: { lock?: boolean } = {},
): Promise<Checkout> {
  const c = clientSecret.startsWith(CHECKOUT_SECRET_PREFIX)
    ? await em.findOne(Checkout, { clientSecret }, opts.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {})
    : null;
  if (!c || effectiveStatus(c) === 'expired') throw ResourceNotFound('Checkout not found');
  await em.populate(c, CHECKOUT_POPULATE);
  return c;
}

/**
 * The origin that may frame the hosted checkout page of this client secret (the checkout's
 * `embed_origin`, for the embedded checkout), or null.
 */
export async function checkoutEmbedOrigin(em: EntityManager, clientSecret: string): Promise<string | null> {
  if (!clientSecret.startsWith(CHECKOUT_SECRET_PREFIX)) return null;
  const c = await em.findOne(Checkout, { clientSecret }, { fields: ['embedOrigin'] });
  if (!c?.embedOrigin || !URL.canParse(c.embedOrigin)) return null;
  const url = new URL(c.embedOrigin);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
}

// ---------------------------------------------------------------------------------------------
// Prices, discounts, tax

interface Selection {
  organizationId: string;
  products: Product[];
  product: Product;
  price: ProductPrice;
}

const loadProducts = loadRuleProducts;

/** Resolves `product_price_id` | `product_id` | `products` to products of one organization and the selected price. */
async function resolveSelection(em: EntityManager, orgIds: string[], input: CheckoutCreate, reads?: Map<string, ProductRead>): Promise<Selection> {
  if (input.product_price_id) {
    const loc = ['body', 'product_price_id'];
    const price = await em.findOne(ProductPrice, { id: input.product_price_id, product: { organization: { $in: orgIds } } });
    if (!price) throw fieldError(loc, 'Price does not exist.', 'value_error', input.product_price_id);
    const product = (await loadProducts(em, [price.product.id], orgIds, reads)).get(price.product.id)!;
    if (price.isArchived || product.isArchived) throw fieldError(loc, 'Price is archived.', 'value_error', input.product_price_id);
    return { organizationId: product.organization.id, products: [product], product, price };
  }
  const ids = input.product_id ? [input.product_id] : [...new Set(input.products!)];
  const byId = await loadProducts(em, ids, orgIds, reads);
  const issues: ValidationIssue[] = [];
  const at = (i: number): Loc => (input.product_id ? ['body', 'product_id'] : ['body', 'products', i]);
  ids.forEach((id, i) => {
    const p = byId.get(id);
    if (!p) issues.push({ type: 'value_error', loc: at(i), msg: 'Product does not exist.', input: id });
    else if (p.isArchived) issues.push({ type: 'value_error', loc: at(i), msg: 'Product is archived.', input: id });
    else if (!defaultPrice(p)) issues.push({ type: 'value_error', loc: at(i), msg: 'Product has no price.', input: id });
  });
  if (issues.length) throw new RequestValidationError(issues);
  const products = ids.map((id) => byId.get(id)!);
  const organizationId = products[0]!.organization.id;
  const other = products.findIndex((p) => p.organization.id !== organizationId);
  if (other >= 0) throw fieldError(at(other), 'All products must belong to the same organization.', 'value_error', ids[other]);
  return { organizationId, products, product: products[0]!, price: defaultPrice(products[0]!)! };
}

export interface CheckoutSettings {
  ttlSeconds: number;
  /** Filled with the chosen products' read models by the same read (create-sql.ts). */
  productReads?: Map<string, ProductRead>;
}

function newCheckout(
  em: EntityManager,
  sel: Selection,
  settings: CheckoutSettings,
  fields: Partial<Checkout>,
): Checkout {
  const now = new Date();
  const c = em.create(Checkout, {
    organization: em.getReference(Organization, sel.organizationId),
    status: 'open',
    clientSecret: randomToken(CHECKOUT_SECRET_PREFIX, 32),
    // Exactly created_at + the configured lifetime.
    createdAt: now,
    expiresAt: new Date(now.getTime() + settings.ttlSeconds * 1000),
    paymentProcessor: 'stripe',
    paymentProcessorMetadata: {},
    product: sel.product,
    productPrice: sel.price,
    allowDiscountCodes: true,
    customFieldData: {},
    customerMetadata: {},
    metadata: {},
    ...fields,
  });
  for (const p of sel.products) c.products.add(p);
  return c;
}

/** `POST /v1/checkouts/`: a new open checkout (not flushed). */
/**
 * `subscription_id` on create (Polar's upgrade checkout): a live subscription of the organization on a
 * free price, and recurring products only. The checkout is its customer's (a different customer_id or
 * customer_external_id is refused); on success the fulfilment moves that subscription to the bought
 * product and price instead of starting a second one (orders/fulfilment.ts).
 */
async function upgradedSubscriptionCustomer(
  em: EntityManager,
  organizationId: string,
  sel: Selection,
  subscriptionId: string,
  prefilled: Customer | null,
): Promise<Customer> {
  const loc = ['body', 'subscription_id'];
  const sub = await em.findOne(Subscription, { id: subscriptionId, organization: organizationId }, { populate: ['price', 'customer'] });
  if (!sub || sub.customer.deletedAt) throw fieldError(loc, 'Subscription does not exist.', 'value_error', subscriptionId);
  if (!ACTIVE_SUBSCRIPTION_STATUSES.includes(sub.status) || sub.endedAt) {
    throw fieldError(loc, 'Subscription is not active.', 'value_error', subscriptionId);
  }
  if (sub.price.amountType !== 'free') throw fieldError(loc, 'Only a subscription on a free price can be upgraded by a checkout.', 'value_error', subscriptionId);
  if (sel.products.some((p) => !p.recurringInterval)) {
    throw fieldError(loc, 'A subscription can only be upgraded to a recurring product.', 'value_error', subscriptionId);
  }
  if (prefilled && prefilled.id !== sub.customer.id) throw fieldError(loc, 'The subscription belongs to another customer.', 'value_error', subscriptionId);
  return sub.customer;
}

export async function createCheckout(
  em: EntityManager,
  principal: Principal,
  input: CheckoutCreate,
  settings: CheckoutSettings,
): Promise<Checkout> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const sel = await resolveSelection(em, orgIds, input, settings.productReads);
  const organizationId = sel.organizationId;

  let customer: Customer | null = null;
  if (input.customer_id) {
    customer = await em.findOne(Customer, { id: input.customer_id, organization: organizationId, deletedAt: null });
    if (!customer) throw fieldError(['body', 'customer_id'], 'Customer does not exist.', 'value_error', input.customer_id);
  } else if (input.customer_external_id) {
    customer = await em.findOne(Customer, { externalId: input.customer_external_id, organization: organizationId, deletedAt: null });
  }

  if (input.subscription_id) customer = await upgradedSubscriptionCustomer(em, organizationId, sel, input.subscription_id, customer);

  let discount: Discount | null = null;
  if (input.discount_id) {
    discount = await discountById(em, organizationId, input.discount_id);
    await validateDiscount(em, discount, sel.product, sel.price, ['body', 'discount_id'], input.discount_id);
  }

  const customFieldData = input.custom_field_data ? validateCustomFieldData(sel.product, input.custom_field_data, false) : {};
  const trialIssues: ValidationIssue[] = [];
  const trial = trialFromInput(input, sel.products.every((p) => p.recurringInterval != null), trialIssues);
  if (trialIssues.length) throw new RequestValidationError(trialIssues);

  const c = newCheckout(em, sel, settings, {
    discount,
    allowDiscountCodes: input.allow_discount_codes,
    customFieldData,
    customer,
    customerExternalId: input.customer_external_id ?? customer?.externalId ?? null,
    customerName: input.customer_name ?? customer?.name ?? null,
    customerEmail: input.customer_email ?? customer?.email ?? null,
    customerIpAddress: input.customer_ip_address ?? null,
    customerBillingAddress: input.customer_billing_address ?? customer?.billingAddress ?? null,
    customerTaxId: input.customer_tax_id ?? customer?.taxId?.[0] ?? null,
    customerMetadata: input.customer_metadata ?? {},
    metadata: input.metadata ?? {},
    successUrl: input.success_url ?? null,
    embedOrigin: input.embed_origin ?? null,
    subscriptionId: input.subscription_id ?? null,
    ...trialColumns(trial ?? null),
  });
  await recompute(em, c, input.amount);
  return c;
}

export interface LinkPrefill {
  customer_email?: string;
  customer_name?: string;
  discount_code?: string;
  amount?: number;
  customer_ip_address?: string | null;
}

/**
 * A fresh checkout from a checkout link: its live products (the link's price first when it has
 * one), discount (dropped silently when no longer redeemable or applicable), allow_discount_codes,
 * success_url and metadata. Prefill that does not validate is ignored. Null when nothing is buyable.
 */
export async function createCheckoutFromLink(
  em: EntityManager,
  link: CheckoutLink,
  prefill: LinkPrefill,
  settings: CheckoutSettings,
): Promise<Checkout | null> {
  const organizationId = link.organization.id;
  const products = link.products.getItems().filter((p) => !p.isArchived && defaultPrice(p));
  if (!products.length) return null;
  const chosen = link.productPrice;
  let product = products[0]!;
  let price = defaultPrice(product)!;
  if (chosen && !chosen.isArchived) {
    const owner = products.find((p) => p.id === chosen.product.id);
    if (owner) {
      product = owner;
      price = owner.prices.getItems().find((p) => p.id === chosen.id) ?? price;
    }
  }
  const sel: Selection = { organizationId, products, product, price };

  let discount: Discount | null = null;
  const candidates = [link.discount && !link.discount.deletedAt ? link.discount : null];
  if (prefill.discount_code && link.allowDiscountCodes) candidates.unshift(await discountByCode(em, organizationId, prefill.discount_code));
  for (const d of candidates) {
    if (d && !notRedeemable(d) && (await appliesTo(em, d, product, price))) {
      discount = d;
      break;
    }
  }

  const c = newCheckout(em, sel, settings, {
    discount,
    allowDiscountCodes: link.allowDiscountCodes,
    customerEmail: prefill.customer_email ?? null,
    customerName: prefill.customer_name ?? null,
    customerIpAddress: prefill.customer_ip_address ?? null,
    metadata: { ...link.metadata },
    successUrl: link.successUrl ?? null,
    trialInterval: link.trialInterval ?? null,
    trialIntervalCount: link.trialIntervalCount ?? null,
  });
  try {
    await recompute(em, c, prefill.amount);
  } catch (err) {
    if (!(err instanceof RequestValidationError)) throw err;
    await recompute(em, c, null);
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Update

type AnyUpdate = CheckoutUpdate & Pick<CheckoutUpdatePublic, 'discount_code'>;

/**
 * Applies a seller (`mode: 'seller'`) or buyer (`mode: 'public'`) update to an open checkout whose
 * relations are loaded (CHECKOUT_POPULATE), then recomputes the amounts. Not open → 403 NotOpenCheckout.
 */
export async function updateCheckout(
  em: EntityManager,
  c: Checkout,
  input: AnyUpdate,
  mode: 'seller' | 'public',
): Promise<void> {
  if (!isOpen(c)) throw NotOpenCheckout(`Checkout is ${effectiveStatus(c)}.`);
  const organizationId = c.organization.id;
  const previousPrice = c.productPrice;

  // Product / price switch, within the checkout's products.
  if (input.product_price_id) {
    const loc = ['body', 'product_price_id'];
    const owner = c.products.getItems().find((p) => p.prices.getItems().some((pr) => pr.id === input.product_price_id));
    const price = owner?.prices.getItems().find((pr) => pr.id === input.product_price_id);
    if (!owner || !price) throw fieldError(loc, 'Price is not available in this checkout.', 'value_error', input.product_price_id);
    if (price.isArchived || owner.isArchived) throw fieldError(loc, 'Price is archived.', 'value_error', input.product_price_id);
    if (input.product_id && input.product_id !== owner.id) {
      throw fieldError(['body', 'product_id'], 'Product does not match product_price_id.', 'value_error', input.product_id);
    }
    c.product = owner;
    c.productPrice = price;
  } else if (input.product_id) {
    const loc = ['body', 'product_id'];
    const product = c.products.getItems().find((p) => p.id === input.product_id);
    if (!product) throw fieldError(loc, 'Product is not available in this checkout.', 'value_error', input.product_id);
    const price = defaultPrice(product);
    if (product.isArchived || !price) throw fieldError(loc, 'Product is archived.', 'value_error', input.product_id);
    if (product !== c.product) {
      c.product = product;
      c.productPrice = price;
    }
  }
  const priceChanged = c.productPrice !== previousPrice;
  if (priceChanged) c.customFieldData = keepAnswersFor(c.product, c.customFieldData);

  // Discount: the seller's discount_id, or the buyer's code.
  if (mode === 'seller' && input.discount_id !== undefined) {
    if (input.discount_id === null) c.discount = null;
    else {
      const d = await discountById(em, organizationId, input.discount_id);
      await validateDiscount(em, d, c.product, c.productPrice, ['body', 'discount_id'], input.discount_id);
      c.discount = d;
    }
  } else if (priceChanged && c.discount && !(await appliesTo(em, c.discount, c.product, c.productPrice))) {
    // A discount that does not apply to the newly chosen product is dropped.
    c.discount = null;
  }
  if (mode === 'seller' && input.allow_discount_codes != null) c.allowDiscountCodes = input.allow_discount_codes;
  if (mode === 'public' && input.discount_code !== undefined) {
    const loc = ['body', 'discount_code'];
    if (!c.allowDiscountCodes) throw fieldError(loc, 'Discount codes are not allowed on this checkout.', 'value_error', input.discount_code);
    if (input.discount_code === null || input.discount_code === '') c.discount = null;
    else {
      const d = await discountByCode(em, organizationId, input.discount_code);
      if (!d) throw fieldError(loc, 'Discount code does not exist.', 'value_error', input.discount_code);
      await validateDiscount(em, d, c.product, c.productPrice, loc, input.discount_code);
      c.discount = d;
    }
  }

  if (input.custom_field_data != null) {
    c.customFieldData = validateCustomFieldData(c.product, input.custom_field_data, mode === 'public');
  }
  if (input.customer_name !== undefined) c.customerName = input.customer_name;
  if (input.customer_email !== undefined) c.customerEmail = input.customer_email;
  if (input.customer_billing_address !== undefined) c.customerBillingAddress = input.customer_billing_address;
  if (input.customer_tax_id !== undefined) c.customerTaxId = input.customer_tax_id;
  if (mode === 'seller') {
    if (input.metadata != null) c.metadata = input.metadata;
    if (input.customer_metadata != null) c.customerMetadata = input.customer_metadata;
    if (input.customer_ip_address !== undefined) c.customerIpAddress = input.customer_ip_address;
    if (input.success_url !== undefined) c.successUrl = input.success_url;
    if (input.embed_origin !== undefined) c.embedOrigin = input.embed_origin;
  }

  // A custom price keeps the amount asked for earlier unless a new one is given or the price changed.
  const requested =
    input.amount ?? (!priceChanged && c.productPrice.amountType === 'custom' ? (c.amount ?? null) : null);
  await recompute(em, c, requested);
}
