/** A checkout's amounts: its price terms, the discount it may take (by id or code) and the recomputed totals with tax. */
import type { EntityManager } from '../../kit/db.ts';
import { fieldError } from '../../kit/errors.ts';
import { checkoutAmounts, PricingError, type PriceTerms } from '../pricing/index.ts';
import { discountTerms, taxBasisPoints } from '../pricing/terms.ts';
import { Product, ProductPrice } from '../products/entities.ts';
import { livePrices } from '../products/schemas.ts';
import { Discount } from '../discounts/entities.ts';
import { Checkout } from './entities.ts';
import { applyCheckoutTrial } from '../trials/index.ts';

type Loc = (string | number)[];

/** The price a product is bought at when none is named: its static price first (livePrices' order). */
export function defaultPrice(product: Product): ProductPrice | null {
  return livePrices(product)[0] ?? null;
}

function priceTerms(price: ProductPrice): PriceTerms {
  switch (price.amountType) {
    case 'fixed':
      return { amountType: 'fixed', priceAmount: price.priceAmount ?? 0, currency: price.priceCurrency };
    case 'custom':
      return {
        amountType: 'custom',
        minimumAmount: price.minimumAmount ?? null,
        maximumAmount: price.maximumAmount ?? null,
        presetAmount: price.presetAmount ?? null,
        currency: price.priceCurrency,
      };
    case 'metered_unit':
      return { amountType: 'metered_unit', currency: price.priceCurrency };
    default:
      return { amountType: 'free', currency: price.priceCurrency };
  }
}

/** Redeemable now: live, started, not ended, redemptions left. Returns why not, or null. */
export function notRedeemable(d: Discount, now = new Date()): string | null {
  if (d.deletedAt) return 'Discount does not exist.';
  if (d.startsAt && d.startsAt.getTime() > now.getTime()) return 'Discount is not redeemable yet.';
  if (d.endsAt && d.endsAt.getTime() < now.getTime()) return 'Discount has ended.';
  if (d.maxRedemptions != null && d.redemptionsCount >= d.maxRedemptions) return 'Discount has reached its maximum redemptions.';
  return null;
}

/** Whether the discount applies to the product (empty products = every product; fixed ones in the price's currency). */
export async function appliesTo(em: EntityManager, d: Discount, product: Product, price: ProductPrice): Promise<boolean> {
  await em.populate(d, ['products']);
  const products = d.products.getItems();
  if (products.length && !products.some((p) => p.id === product.id)) return false;
  if (d.type === 'fixed' && price.amountType !== 'free' && (d.currency ?? 'usd') !== price.priceCurrency) return false;
  return true;
}

/** A discount the checkout may take now: redeemable and applicable, else 422 on `loc`. */
export async function validateDiscount(em: EntityManager, d: Discount, product: Product, price: ProductPrice, loc: Loc, input: unknown) {
  const why = notRedeemable(d);
  if (why) throw fieldError(loc, why, 'value_error', input);
  if (!(await appliesTo(em, d, product, price))) {
    throw fieldError(loc, 'Discount does not apply to this product.', 'value_error', input);
  }
}

export async function discountById(em: EntityManager, organizationId: string, id: string): Promise<Discount> {
  const d = await em.findOne(Discount, { id, organization: organizationId, deletedAt: null });
  if (!d) throw fieldError(['body', 'discount_id'], 'Discount does not exist.', 'value_error', id);
  return d;
}

/** A live discount of the organization by code, compared case-insensitively. */
export async function discountByCode(em: EntityManager, organizationId: string, code: string): Promise<Discount | null> {
  const rows = await em.execute<{ id: string }[]>(
    `select id from discounts where organization_id = ? and deleted_at is null and lower(code) = lower(?) limit 1`,
    [organizationId, code],
  );
  return rows[0] ? em.findOne(Discount, { id: rows[0].id }) : null;
}

/**
 * Recomputes every amount and flag of `c` from its price, the requested amount (custom prices), its
 * discount and the tax rate of its billing country. A refused amount is a 422 on `body.amount`.
 */
export async function recompute(em: EntityManager, c: Checkout, requestedAmount: number | null | undefined): Promise<void> {
  const price = c.productPrice;
  const product = c.product;
  const discount = c.discount && !c.discount.deletedAt ? c.discount : null;
  const terms = priceTerms(price);
  let a;
  try {
    a = checkoutAmounts({
      price: terms,
      requestedAmount,
      recurring: product.recurringInterval != null,
      discount: discount ? { terms: discountTerms(discount), appliesToProduct: await appliesTo(em, discount, product, price) } : null,
      taxBasisPoints: await taxBasisPoints(em, c.organization.id, c.customerBillingAddress?.country),
    });
  } catch (err) {
    if (err instanceof PricingError) throw fieldError(['body', err.field], err.message, 'value_error', requestedAmount);
    throw err;
  }
  a = await applyCheckoutTrial(em, c, a);
  const free = a.is_free_product_price;
  c.amount = free ? null : a.amount;
  c.discountAmount = free ? null : a.discount_amount;
  c.netAmount = free ? null : a.net_amount;
  c.taxAmount = free ? null : a.tax_amount;
  c.totalAmount = free ? null : a.total_amount;
  c.currency = free ? null : price.priceCurrency;
  c.isFreeProductPrice = free;
  c.isDiscountApplicable = a.is_discount_applicable;
  c.isPaymentRequired = a.is_payment_required;
  c.isPaymentSetupRequired = a.is_payment_setup_required;
  c.isPaymentFormRequired = a.is_payment_form_required;
}

// ---------------------------------------------------------------------------------------------
// Custom fields
