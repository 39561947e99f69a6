/**
 * Wire shape of orders, as `@polar-sh/sdk` 0.29.3 parses them (`Order`): every key present, nullable
 * as `null`. `amount` is the net amount (after discount, before tax); we also return subtotal_amount,
 * discount_amount, net_amount, total_amount, paid, custom_field_data and items.
 */
import { z } from 'zod/v4';
import { containsPattern } from '../../kit/db.ts';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import { addressOutSchema, customerSchema, serializeCustomer } from '../customers/schemas.ts';
import { priceSchema, productSchema, serializePrice, serializeProduct, type ProductRead } from '../products/schemas.ts';
import { discountBaseSchema, serializeDiscountBase } from '../discounts/schemas.ts';
import { serializeSubscriptionBase, serializeUser, subscriptionBaseSchema, userOutSchema } from '../subscriptions/schemas.ts';
import { BILLING_REASONS, ORDER_STATUSES, type Order } from './entities.ts';

const metadataOut = metadataOutputSchema;

export const ORDER_POPULATE = [
  'customer',
  'productPrice',
  'discount',
  'subscription',
  'product.prices',
  'product.prices.meter',
  'product.productBenefits.benefit',
  'product.medias.file',
  'product.attachedCustomFields.customField',
] as const;

const orderItemSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  label: z.string(),
  amount: z.number().int(),
  tax_amount: z.number().int(),
  proration: z.boolean(),
  product_price_id: z.uuid(),
});

export const orderSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  metadata: metadataOut,
  custom_field_data: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  status: z.enum(ORDER_STATUSES),
  paid: z.boolean(),
  subtotal_amount: z.number().int(),
  discount_amount: z.number().int(),
  net_amount: z.number().int(),
  amount: z.number().int(),
  tax_amount: z.number().int(),
  total_amount: z.number().int(),
  refunded_amount: z.number().int(),
  refunded_tax_amount: z.number().int(),
  currency: z.string(),
  billing_reason: z.enum(BILLING_REASONS),
  billing_address: addressOutSchema.nullable(),
  customer_id: z.uuid(),
  product_id: z.uuid(),
  product_price_id: z.uuid(),
  discount_id: z.uuid().nullable(),
  subscription_id: z.uuid().nullable(),
  checkout_id: z.uuid().nullable(),
  customer: customerSchema,
  user_id: z.uuid(),
  user: userOutSchema,
  product: productSchema,
  product_price: priceSchema,
  discount: discountBaseSchema.nullable(),
  subscription: subscriptionBaseSchema.nullable(),
  items: z.array(orderItemSchema),
});
export type OrderOut = z.infer<typeof orderSchema>;

/** Needs ORDER_POPULATE loaded. */
export function serializeOrder(o: Order): OrderOut {
  return serializeOrderWithProduct(o, serializeProduct(o.product));
}

/** `serializeOrder` with the product's read model built elsewhere: the paths below `product` need not be loaded. */
export function serializeOrderWithProduct(o: Order, product: ProductRead): OrderOut {
  const a = o.billingAddress;
  const created = o.createdAt.toISOString();
  const modified = o.modifiedAt?.toISOString() ?? null;
  return {
    id: o.id,
    created_at: created,
    modified_at: modified,
    metadata: o.metadata,
    custom_field_data: o.customFieldData,
    status: o.status,
    paid: o.status !== 'pending',
    subtotal_amount: o.subtotalAmount,
    discount_amount: o.discountAmount,
    net_amount: o.netAmount,
    amount: o.netAmount,
    tax_amount: o.taxAmount,
    total_amount: o.totalAmount,
    refunded_amount: o.refundedAmount,
    refunded_tax_amount: o.refundedTaxAmount,
    currency: o.currency,
    billing_reason: o.billingReason,
    billing_address: a
      ? { line1: a.line1 ?? null, line2: a.line2 ?? null, postal_code: a.postal_code ?? null, city: a.city ?? null, state: a.state ?? null, country: a.country }
      : null,
    customer_id: o.customer.id,
    product_id: o.product.id,
    product_price_id: o.productPrice.id,
    discount_id: o.discount?.id ?? null,
    subscription_id: o.subscription?.id ?? null,
    checkout_id: o.checkout?.id ?? null,
    customer: serializeCustomer(o.customer),
    user_id: o.customer.id,
    user: serializeUser(o.customer),
    product: product as OrderOut['product'],
    product_price: serializePrice(o.productPrice, o.product),
    discount: o.discount ? serializeDiscountBase(o.discount) : null,
    subscription: o.subscription ? serializeSubscriptionBase(o.subscription) : null,
    items: o.lines
      ? // Several lines (a renewal with metered usage): amounts before discount, summing to subtotal_amount.
        o.lines.map((l) => ({
          id: l.id,
          created_at: created,
          modified_at: modified,
          label: l.label,
          amount: l.amount,
          tax_amount: l.taxAmount,
          proration: l.proration,
          product_price_id: l.productPriceId,
        }))
      : [
          {
            // One line: the price, net of discount, with its tax.
            id: o.id,
            created_at: created,
            modified_at: modified,
            label: o.product.name,
            amount: o.netAmount,
            tax_amount: o.taxAmount,
            proration: false,
            product_price_id: o.productPrice.id,
          },
        ],
  };
}

/** `GET /v1/orders/{id}/invoice` (and the portal's): a presigned URL to the PDF. */
export const orderInvoiceSchema = z.object({ url: z.string() });

type Dir = 'asc' | 'desc';
/** Sorting keys of order lists → MikroORM orderBy (relations sort by what a person reads: email, name). */
const ORDER_SORT: Record<string, (d: Dir) => Record<string, unknown>> = {
  created_at: (d) => ({ createdAt: d }),
  amount: (d) => ({ netAmount: d }),
  net_amount: (d) => ({ netAmount: d }),
  customer: (d) => ({ customer: { email: d } }),
  product: (d) => ({ product: { name: d } }),
  discount: (d) => ({ discount: { name: d } }),
  subscription: (d) => ({ subscription: { id: d } }),
  organization: (d) => ({ organization: { name: d } }),
};

export function orderOrderBy(sorting: string[]): Record<string, unknown>[] {
  return sorting.map((s) => {
    const dir: Dir = s.startsWith('-') ? 'desc' : 'asc';
    return (ORDER_SORT[s.replace(/^-/, '')] ?? ORDER_SORT.created_at!)(dir);
  });
}

/**
 * Product conditions for `product_billing_type` and `product_price_type` (`one_time` | `recurring`):
 * both follow the product's recurring interval; given together, an order must match both.
 */
/**
 * The order lists' product conditions (seller and portal): billing / price type, product ids and the
 * portal's product-name search; undefined when there is none.
 */
export function orderProductFilter(f: {
  product_billing_type?: readonly string[];
  product_price_type?: readonly string[];
  product_id?: readonly string[];
  query?: string | null;
}): Record<string, unknown> | undefined {
  const product = productTypeFilter(f.product_billing_type, f.product_price_type);
  if (f.product_id) product.id = { $in: f.product_id };
  if (f.query) product.name = { $ilike: containsPattern(f.query) };
  return Object.keys(product).length ? product : undefined;
}

export function productTypeFilter(...lists: (readonly string[] | undefined)[]): Record<string, unknown> {
  let allowed = new Set(['one_time', 'recurring']);
  for (const list of lists) if (list) allowed = new Set(list.filter((v) => allowed.has(v)));
  if (allowed.size === 2) return {};
  if (allowed.size === 0) return { $and: [{ recurringInterval: null }, { recurringInterval: { $ne: null } }] };
  return { recurringInterval: allowed.has('recurring') ? { $ne: null } : null };
}
