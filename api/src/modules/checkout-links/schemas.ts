/** Wire shapes of checkout links, as `@polar-sh/sdk` 0.29.3 parses them (all keys present, nulls explicit). */
import { z } from 'zod/v4';
import { metadataSchema } from '../../kit/validation.ts';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import { productSchema, priceSchema, serializePrice, serializeProduct } from '../products/schemas.ts';
import type { Product, ProductPrice } from '../products/entities.ts';
import { discountBaseSchema, serializeDiscountBase } from '../discounts/schemas.ts';
import type { CheckoutLink } from './entities.ts';
import { exactlyOneProductChoice } from '../checkouts/schemas.ts';
import { serializeTrial, trialInputFields, trialOutFields } from '../trials/index.ts';

const successUrl = z.url({ protocol: /^https?$/ }).max(2048);
const label = z.string().trim().max(255);

export const checkoutLinkCreateSchema = z
  .object({
    product_price_id: z.uuid().optional(),
    product_id: z.uuid().optional(),
    products: z.array(z.uuid()).min(1).max(100).optional(),
    payment_processor: z.literal('stripe').default('stripe'),
    label: label.nullish(),
    allow_discount_codes: z.boolean().default(true),
    discount_id: z.uuid().nullish(),
    success_url: successUrl.nullish(),
    ...trialInputFields,
    metadata: metadataSchema.optional(),
  })
  .check(exactlyOneProductChoice);
export type CheckoutLinkCreate = z.output<typeof checkoutLinkCreateSchema>;

export const checkoutLinkUpdateSchema = z.object({
  metadata: metadataSchema.nullish(),
  products: z.array(z.uuid()).min(1).max(100).nullish(),
  label: label.nullish(),
  allow_discount_codes: z.boolean().nullish(),
  discount_id: z.uuid().nullish(),
  success_url: successUrl.nullish(),
  /** Both null: no trial of its own any more. */
  ...trialInputFields,
});
export type CheckoutLinkUpdate = z.output<typeof checkoutLinkUpdateSchema>;

export const checkoutLinkSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  metadata: metadataOutputSchema,
  payment_processor: z.literal('stripe'),
  client_secret: z.string(),
  success_url: z.string().nullable(),
  label: z.string().nullable(),
  allow_discount_codes: z.boolean(),
  ...trialOutFields,
  discount_id: z.uuid().nullable(),
  organization_id: z.uuid(),
  products: z.array(productSchema),
  discount: discountBaseSchema.nullable(),
  product_id: z.uuid(),
  product_price_id: z.uuid(),
  product: productSchema,
  product_price: priceSchema,
  url: z.string(),
});
export type CheckoutLinkOut = z.infer<typeof checkoutLinkSchema>;

export function checkoutLinkUrl(publicUrl: string, clientSecret: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1/checkout-links/${clientSecret}/redirect`;
}

/** The deprecated single-product view: the chosen price if any, else the first live price of the first product. */
function primary(link: CheckoutLink): { product: Product; price: ProductPrice } {
  const products = link.products.getItems();
  const chosen = link.productPrice;
  if (chosen) {
    const product = products.find((p) => p.id === chosen.product.id);
    if (product) {
      const price = product.prices.getItems().find((p) => p.id === chosen.id);
      if (price) return { product, price };
    }
  }
  const product = products[0]!;
  const prices = product.prices.getItems();
  return { product, price: prices.find((p) => !p.isArchived) ?? prices[0]! };
}

/** Needs CHECKOUT_LINK_POPULATE (service.ts) loaded. */
export function serializeCheckoutLink(link: CheckoutLink, publicUrl: string): CheckoutLinkOut {
  const { product, price } = primary(link);
  const discount = link.discount && !link.discount.deletedAt ? link.discount : null;
  return {
    id: link.id,
    created_at: link.createdAt.toISOString(),
    modified_at: link.modifiedAt?.toISOString() ?? null,
    metadata: link.metadata,
    payment_processor: 'stripe',
    client_secret: link.clientSecret,
    success_url: link.successUrl ?? null,
    label: link.label ?? null,
    allow_discount_codes: link.allowDiscountCodes,
    ...serializeTrial(link),
    discount_id: discount?.id ?? null,
    organization_id: link.organization.id,
    products: link.products.getItems().map(serializeProduct),
    discount: discount ? serializeDiscountBase(discount) : null,
    product_id: product.id,
    product_price_id: price.id,
    product: serializeProduct(product),
    product_price: serializePrice(price, product),
    url: checkoutLinkUrl(publicUrl, link.clientSecret),
  };
}
