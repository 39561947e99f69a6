/**
 * Orders: one payment (or free acquisition) of a product price by a customer. Amounts are integers in
 * minor units of `currency`: subtotal (before discount) − discount = net; net + tax = total. One
 * order per checkout (unique `checkout_id`), which makes the checkout workflow's order step idempotent.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Product, ProductPrice } from '../products/entities.ts';
import { Discount } from '../discounts/entities.ts';
import { Customer, type BillingAddress } from '../customers/entities.ts';
import { Checkout, type CustomFieldData } from '../checkouts/entities.ts';
import { Subscription } from '../subscriptions/entities.ts';

export const ORDER_STATUSES = ['pending', 'paid', 'refunded', 'partially_refunded'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const BILLING_REASONS = ['purchase', 'subscription_create', 'subscription_cycle', 'subscription_update'] as const;
export type BillingReason = (typeof BILLING_REASONS)[number];

export interface OrderLine {
  id: string;
  label: string;
  /** Before discount, minor units. */
  amount: number;
  discountAmount: number;
  taxAmount: number;
  proration: boolean;
  productPriceId: string;
  /** Metered lines: the meter and the units billed. */
  meterId?: string | null;
  usage?: string | null;
  creditsUsed?: string | null;
  billableUnits?: string | null;
  unitAmount?: string | null;
  capAmount?: number | null;
}

export const Order = defineEntity({
  name: 'Order',
  tableName: 'orders',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    product: () => p.manyToOne(Product).deleteRule('cascade').index(),
    productPrice: () => p.manyToOne(ProductPrice).deleteRule('cascade').index(),
    discount: () => p.manyToOne(Discount).nullable().deleteRule('set null').index(),
    subscription: () => p.manyToOne(Subscription).nullable().deleteRule('set null').index(),
    checkout: () => p.manyToOne(Checkout).nullable().deleteRule('set null').unique(),
    status: p.enum(ORDER_STATUSES),
    billingReason: p.enum(BILLING_REASONS),
    subtotalAmount: p.integer(),
    discountAmount: p.integer(),
    netAmount: p.integer(),
    taxAmount: p.integer(),
    totalAmount: p.integer(),
    refundedAmount: p.integer().default(0),
    refundedTaxAmount: p.integer().default(0),
    currency: p.string().length(3),
    billingAddress: p.json<BillingAddress>().nullable(),
    customFieldData: p.json<CustomFieldData>(),
    metadata: p.json<Metadata>(),
    processorChargeId: p.string().nullable(),
    /**
     * The order's lines when it has several (a renewal with metered usage, see docs/billing.md):
     * amounts before discount summing to `subtotalAmount`, with the order's discount and tax split
     * over them. Null: one line, the product price.
     */
    lines: p.json<OrderLine[]>().nullable(),
  },
  indexes: [
    {
      // The seller's list in its default order (newest first, then id): a page is read in index order.
      name: 'orders_organization_created_at_id_index',
      expression: 'create index "orders_organization_created_at_id_index" on "orders" ("organization_id", "created_at" desc, "id")',
    },
  ],
});
export type Order = InferEntity<typeof Order>;
