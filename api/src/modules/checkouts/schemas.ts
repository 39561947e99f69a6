/**
 * Wire shapes of checkout sessions, as `@polar-sh/sdk` 0.29.3 parses them (`Checkout`,
 * `CheckoutPublic`): every key present, nullable as `null`. We also return `discount_amount` and
 * `net_amount`. The seller view carries metadata, customer_external_id, subscription_id and
 * customer_metadata; the public (client secret) view drops them and embeds the organization.
 */
import { z } from 'zod/v4';
import { metadataSchema, money } from '../../kit/validation.ts';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import { billingAddressSchema, customerEmailSchema, addressOutSchema } from '../customers/schemas.ts';
import {
  priceSchema,
  productPublicSchema,
  productSchema,
  attachedCustomFieldSchema,
  serializePrice,
  serializeProduct,
  serializeProductPublic,
  PRODUCT_POPULATE,
  type ProductPublicRead,
  type ProductRead,
} from '../products/schemas.ts';
import { serializeCustomField } from '../custom-fields/schemas.ts';
import { organizationSchema, serializeOrganization } from '../organizations/schemas.ts';
import type { Discount } from '../discounts/entities.ts';
import { CHECKOUT_STATUSES, type Checkout, type CheckoutStatus } from './entities.ts';
import { TRIAL_INTERVALS, checkoutTrialPeriod, serializeTrial, trialInputFields, trialOutFields } from '../trials/index.ts';

const httpUrl = z.url({ protocol: /^https?$/ }).max(2048);
const nameSchema = z.string().trim().max(255); // checkouts.customer_name is a varchar(255)
const taxIdSchema = z.string().trim().min(1).max(255);
const ipSchema = z.union([z.ipv4(), z.ipv6()]);
/** Answers by custom field slug; each is checked against the product's attached fields. */
export const customFieldDataSchema = z.record(
  z.string().max(128),
  z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()]),
);
const amountSchema = money();

const createFields = {
  metadata: metadataSchema.optional(),
  custom_field_data: customFieldDataSchema.optional(),
  discount_id: z.uuid().nullish(),
  allow_discount_codes: z.boolean().default(true),
  amount: amountSchema.nullish(),
  customer_id: z.uuid().nullish(),
  customer_external_id: z.string().min(1).max(255).nullish(),
  customer_name: nameSchema.nullish(),
  customer_email: customerEmailSchema.nullish(),
  customer_ip_address: ipSchema.nullish(),
  customer_billing_address: billingAddressSchema.nullish(),
  customer_tax_id: taxIdSchema.nullish(),
  customer_metadata: metadataSchema.optional(),
  subscription_id: z.uuid().nullish(),
  ...trialInputFields,
  success_url: httpUrl.nullish(),
  embed_origin: httpUrl.nullish(),
};

/** A create body names exactly one of `product_price_id`, `product_id` or `products` (checkouts and checkout links). */
export function exactlyOneProductChoice(ctx: z.core.ParsePayload<{ product_price_id?: unknown; product_id?: unknown; products?: unknown }>): void {
  if (ctx.issues.length) return;
  const given = (['product_price_id', 'product_id', 'products'] as const).filter((k) => ctx.value[k] !== undefined);
  if (given.length !== 1) {
    ctx.issues.push({
      code: 'custom',
      path: given.length ? [given[1]!] : [],
      message: 'Exactly one of product_price_id, product_id or products is required',
      input: ctx.value,
    });
  }
}

export const checkoutCreateSchema = z
  .object({
    product_price_id: z.uuid().optional(),
    product_id: z.uuid().optional(),
    products: z.array(z.uuid()).min(1).max(100).optional(),
    ...createFields,
  })
  .check(exactlyOneProductChoice);
export type CheckoutCreate = z.output<typeof checkoutCreateSchema>;

/** What the buyer may change (`PATCH /v1/checkouts/client/{client_secret}`); null clears nullable fields. */
const publicUpdateFields = {
  custom_field_data: customFieldDataSchema.nullish(),
  product_id: z.uuid().nullish(),
  product_price_id: z.uuid().nullish(),
  amount: amountSchema.nullish(),
  customer_name: nameSchema.nullish(),
  customer_email: customerEmailSchema.nullish(),
  customer_billing_address: billingAddressSchema.nullish(),
  customer_tax_id: taxIdSchema.nullish(),
};
export const checkoutUpdatePublicSchema = z.object({
  ...publicUpdateFields,
  discount_code: z.string().trim().max(256).nullish(),
});
export type CheckoutUpdatePublic = z.output<typeof checkoutUpdatePublicSchema>;

/** The seller's `PATCH /v1/checkouts/{id}`: the buyer's fields plus the seller-only ones. */
export const checkoutUpdateSchema = z.object({
  ...publicUpdateFields,
  metadata: metadataSchema.nullish(),
  discount_id: z.uuid().nullish(),
  allow_discount_codes: z.boolean().nullish(),
  customer_ip_address: ipSchema.nullish(),
  customer_metadata: metadataSchema.nullish(),
  success_url: httpUrl.nullish(),
  embed_origin: httpUrl.nullish(),
});
export type CheckoutUpdate = z.output<typeof checkoutUpdateSchema>;

const metadataOut = metadataOutputSchema;
const nullableInt = z.number().int().nullable();

/** The discount as a checkout shows it (`CheckoutDiscount*`): no metadata, counts or products. */
export const checkoutDiscountSchema = z.union([
  z.object({
    id: z.uuid(),
    name: z.string(),
    code: z.string().nullable(),
    type: z.literal('percentage'),
    basis_points: z.number().int(),
    duration: z.enum(['once', 'forever', 'repeating']),
    duration_in_months: z.number().int().optional(),
  }),
  z.object({
    id: z.uuid(),
    name: z.string(),
    code: z.string().nullable(),
    type: z.literal('fixed'),
    amount: z.number().int(),
    currency: z.string(),
    duration: z.enum(['once', 'forever', 'repeating']),
    duration_in_months: z.number().int().optional(),
  }),
]);

const commonOut = {
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  custom_field_data: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  payment_processor: z.literal('stripe'),
  status: z.enum(CHECKOUT_STATUSES),
  client_secret: z.string(),
  url: z.string(),
  expires_at: z.string(),
  success_url: z.string(),
  embed_origin: z.string().nullable(),
  amount: nullableInt,
  discount_amount: nullableInt,
  net_amount: nullableInt,
  tax_amount: nullableInt,
  currency: z.string().nullable(),
  subtotal_amount: nullableInt,
  total_amount: nullableInt,
  product_id: z.uuid(),
  product_price_id: z.uuid(),
  discount_id: z.uuid().nullable(),
  allow_discount_codes: z.boolean(),
  is_discount_applicable: z.boolean(),
  is_free_product_price: z.boolean(),
  is_payment_required: z.boolean(),
  is_payment_setup_required: z.boolean(),
  is_payment_form_required: z.boolean(),
  ...trialOutFields,
  /** The trial the buyer gets (its own, else the product's; none after an earlier trial of the product). */
  active_trial_interval: z.enum(TRIAL_INTERVALS).nullable(),
  active_trial_interval_count: z.number().int().nullable(),
  /** When the trial would end if confirmed now. */
  trial_end: z.string().nullable(),
  customer_id: z.uuid().nullable(),
  customer_name: z.string().nullable(),
  customer_email: z.string().nullable(),
  customer_ip_address: z.string().nullable(),
  customer_billing_address: addressOutSchema.nullable(),
  customer_tax_id: z.string().nullable(),
  payment_processor_metadata: z.record(z.string(), z.string()),
  products: z.array(productSchema),
  product: productSchema,
  product_price: priceSchema,
  discount: checkoutDiscountSchema.nullable(),
  attached_custom_fields: z.array(attachedCustomFieldSchema),
};

export const checkoutSchema = z.object({
  ...commonOut,
  metadata: metadataOut,
  customer_external_id: z.string().nullable(),
  subscription_id: z.uuid().nullable(),
  customer_metadata: metadataOut,
});
export type CheckoutOut = z.infer<typeof checkoutSchema>;

/** The buyer's view: products in their public shape (benefits without properties, no seller metadata). */
export const checkoutPublicSchema = z.object({
  ...commonOut,
  products: z.array(productPublicSchema),
  product: productPublicSchema,
  organization: organizationSchema,
});
export type CheckoutPublicOut = z.infer<typeof checkoutPublicSchema>;

const trimSlash = (u: string) => u.replace(/\/+$/, '');
/** The hosted checkout page of a session. */
export function checkoutUrl(publicUrl: string, clientSecret: string): string {
  return `${trimSlash(publicUrl)}/checkout/${clientSecret}`;
}

/** `expired` once past `expires_at`, even before the expiry workflow has written it. */
export function effectiveStatus(c: Pick<Checkout, 'status' | 'expiresAt'>, now = new Date()): CheckoutStatus {
  return c.status === 'open' && c.expiresAt.getTime() <= now.getTime() ? 'expired' : c.status;
}

export function serializeCheckoutDiscount(d: Discount): z.infer<typeof checkoutDiscountSchema> {
  const duration =
    d.duration === 'repeating'
      ? { duration: 'repeating' as const, duration_in_months: d.durationInMonths ?? 1 }
      : { duration: d.duration };
  const common = { id: d.id, name: d.name, code: d.code ?? null };
  return d.type === 'percentage'
    ? { ...common, type: 'percentage', basis_points: d.basisPoints ?? 0, ...duration }
    : { ...common, type: 'fixed', amount: d.amount ?? 0, currency: d.currency ?? 'usd', ...duration };
}

/**
 * The read models of a checkout's products built elsewhere (by PostgreSQL, `productJsonSql`), by id,
 * in the checkout's order: the graph below the checkout's products then need not be loaded.
 */
export interface CheckoutProductsRead {
  products: ProductRead[];
  product: ProductRead;
}

/** Needs CHECKOUT_POPULATE (service.ts) loaded, or `read` with the products and `productPrice.meter`. */
function serializeCommon(c: Checkout, publicUrl: string, read?: CheckoutProductsRead) {
  return {
    ...serializeCommonFields(c, publicUrl, read),
    products: read ? read.products : c.products.getItems().map(serializeProduct),
    product: read ? read.product : serializeProduct(c.product),
  };
}

/** Everything but the products, whose shape depends on who reads (seller or buyer). */
function serializeCommonFields(c: Checkout, publicUrl: string, read?: CheckoutProductsRead) {
  const product = c.product;
  const price = c.productPrice;
  const discount = c.discount && !c.discount.deletedAt ? c.discount : null;
  const address = c.customerBillingAddress;
  return {
    id: c.id,
    created_at: c.createdAt.toISOString(),
    modified_at: c.modifiedAt?.toISOString() ?? null,
    custom_field_data: c.customFieldData,
    payment_processor: 'stripe' as const,
    status: effectiveStatus(c),
    client_secret: c.clientSecret,
    url: checkoutUrl(publicUrl, c.clientSecret),
    expires_at: c.expiresAt.toISOString(),
    success_url: c.successUrl ?? `${checkoutUrl(publicUrl, c.clientSecret)}/confirmation`,
    embed_origin: c.embedOrigin ?? null,
    amount: c.amount ?? null,
    discount_amount: c.discountAmount ?? null,
    net_amount: c.netAmount ?? null,
    tax_amount: c.taxAmount ?? null,
    currency: c.currency ?? null,
    subtotal_amount: c.amount ?? null,
    total_amount: c.totalAmount ?? null,
    product_id: product.id,
    product_price_id: price.id,
    discount_id: discount?.id ?? null,
    allow_discount_codes: c.allowDiscountCodes,
    is_discount_applicable: c.isDiscountApplicable,
    is_free_product_price: c.isFreeProductPrice,
    is_payment_required: c.isPaymentRequired,
    is_payment_setup_required: c.isPaymentSetupRequired,
    is_payment_form_required: c.isPaymentFormRequired,
    ...serializeTrial(c),
    active_trial_interval: c.activeTrialInterval ?? null,
    active_trial_interval_count: c.activeTrialIntervalCount ?? null,
    trial_end: checkoutTrialPeriod(c, new Date())?.end.toISOString() ?? null,
    customer_id: c.customer?.id ?? null,
    customer_name: c.customerName ?? null,
    customer_email: c.customerEmail ?? null,
    customer_ip_address: c.customerIpAddress ?? null,
    customer_billing_address: address
      ? {
          line1: address.line1 ?? null,
          line2: address.line2 ?? null,
          postal_code: address.postal_code ?? null,
          city: address.city ?? null,
          state: address.state ?? null,
          country: address.country,
        }
      : null,
    customer_tax_id: c.customerTaxId ?? null,
    payment_processor_metadata: c.paymentProcessorMetadata,
    product_price: serializePrice(price, product),
    discount: discount ? serializeCheckoutDiscount(discount) : null,
    attached_custom_fields: read
      ? read.product.attached_custom_fields
      : product.attachedCustomFields.getItems().map((a) => ({
          custom_field_id: a.customField.id,
          custom_field: serializeCustomField(a.customField),
          order: a.order,
          required: a.required,
        })),
  };
}

/** The seller's read model (API and webhooks). */
export function serializeCheckout(c: Checkout, publicUrl: string): CheckoutOut {
  return serializeCheckoutWithProducts(c, publicUrl, undefined);
}

/** `serializeCheckout` with the products' read models built elsewhere (`read`; undefined: from the loaded graph). */
export function serializeCheckoutWithProducts(c: Checkout, publicUrl: string, read: CheckoutProductsRead | undefined): CheckoutOut {
  return {
    ...serializeCommon(c, publicUrl, read),
    metadata: c.metadata,
    customer_external_id: c.customerExternalId ?? null,
    subscription_id: c.subscriptionId ?? null,
    customer_metadata: c.customerMetadata,
  };
}

/** The buyer's read model, by client secret. */
export function serializeCheckoutPublic(c: Checkout, publicUrl: string): CheckoutPublicOut {
  return {
    ...serializeCommonFields(c, publicUrl),
    products: c.products.getItems().map(serializeProductPublic),
    product: serializeProductPublic(c.product),
    organization: serializeOrganization(c.organization),
  };
}

/** `serializeProductPublic` of a product's read model: no metadata, benefits in their public shape. */
function productPublicRead(p: ProductRead): ProductPublicRead {
  const { metadata: _metadata, benefits, ...rest } = p;
  return {
    ...rest,
    benefits: benefits.map((b) => ({
      id: b.id,
      created_at: b.created_at,
      modified_at: b.modified_at,
      type: b.type,
      description: b.description,
      selectable: b.selectable,
      deletable: b.deletable,
      organization_id: b.organization_id,
    })),
  };
}

/** `serializeCheckoutPublic` with the products' read models built elsewhere (`checkoutProductsJson`, product-reads.ts). */
export function serializeCheckoutPublicWithProducts(c: Checkout, publicUrl: string, read: CheckoutProductsRead): CheckoutPublicOut {
  return {
    ...serializeCommonFields(c, publicUrl, read),
    products: read.products.map(productPublicRead),
    product: productPublicRead(read.product),
    organization: serializeOrganization(c.organization),
  };
}

/** Body of `POST /v1/checkouts/client/{client_secret}/confirm`: the buyer's last changes plus the card. */
export const checkoutConfirmSchema = checkoutUpdatePublicSchema.extend({
  confirmation_token_id: z.string().trim().min(1).max(255).nullish(),
});
export type CheckoutConfirm = z.output<typeof checkoutConfirmSchema>;

export const checkoutConfirmedSchema = checkoutPublicSchema.extend({ customer_session_token: z.string() });

/** MikroORM's alias of the checkouts table in a checkout query: `lockTableAliases` locks that row only, not the rows it joins. */
export const CHECKOUT_ALIAS = 'c0';

/** Everything the read models read. */
export const CHECKOUT_POPULATE = [
  ...PRODUCT_POPULATE.map((path) => `products.${path}` as const),
  ...PRODUCT_POPULATE.map((path) => `product.${path}` as const),
  'productPrice',
  'discount',
  'organization',
  'customer',
] as const;
