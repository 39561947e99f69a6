/** Product rules. Services never commit on their own: the caller's transaction does. */
import type { EntityManager } from '../../kit/db.ts';
import { Organization } from '../organizations/entities.ts';
import { Product, ProductPrice } from './entities.ts';
import type { PriceCreate } from './schemas.ts';

export function createProduct(
  em: EntityManager,
  organizationId: string,
  input: {
    name: string;
    description?: string | null;
    recurring_interval?: 'month' | 'year' | null;
    prices: PriceCreate[];
    metadata?: Record<string, string | number | boolean>;
  },
): Product {
  const product = em.create(Product, {
    organization: em.getReference(Organization, organizationId),
    name: input.name,
    description: input.description ?? null,
    recurringInterval: input.recurring_interval ?? null,
    metadata: input.metadata ?? {},
  });
  for (const price of input.prices) {
    em.create(ProductPrice, {
      product,
      amountType: price.amount_type,
      priceCurrency: 'price_currency' in price ? price.price_currency : 'usd',
      priceAmount: price.amount_type === 'fixed' ? price.price_amount : null,
      minimumAmount: price.amount_type === 'custom' ? (price.minimum_amount ?? null) : null,
      maximumAmount: price.amount_type === 'custom' ? (price.maximum_amount ?? null) : null,
      presetAmount: price.amount_type === 'custom' ? (price.preset_amount ?? null) : null,
    });
  }
  return product;
}
