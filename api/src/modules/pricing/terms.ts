/** The pricing inputs read from the database: a discount's terms and duration, the tax rate of a billing country. */
import type { EntityManager } from '../../kit/db.ts';
import type { Discount } from '../discounts/entities.ts';
import { TaxRate } from '../tax-rates/entities.ts';
import type { DiscountTerms } from './discounts.ts';
import type { DiscountDuration } from './index.ts';

export function discountTerms(d: Discount): DiscountTerms {
  return d.type === 'percentage' ? { type: 'percentage', basis_points: d.basisPoints ?? 0 } : { type: 'fixed', amount: d.amount ?? 0 };
}

export function discountDuration(d: Discount): DiscountDuration {
  return d.duration === 'repeating' ? { duration: 'repeating', durationInMonths: d.durationInMonths ?? 1 } : { duration: d.duration as 'once' | 'forever' };
}

/** Tax rates a caller already read for an organization in `em`'s transaction (`knownTaxRates`), by upper-case country. */
const known = new WeakMap<EntityManager, { organizationId: string; rates: Record<string, number> }>();

/** Records every tax rate of the organization, read in `em`'s transaction with other rows: `taxBasisPoints` then asks nothing. */
export function knownTaxRates(em: EntityManager, organizationId: string, rates: Record<string, number>): void {
  known.set(em, { organizationId, rates });
}

/** The organization's tax rate for `country` in basis points (0 when none is configured or the country is unknown). */
export async function taxBasisPoints(em: EntityManager, organizationId: string, country: string | null | undefined): Promise<number> {
  if (!country) return 0;
  const k = known.get(em);
  if (k?.organizationId === organizationId) return k.rates[country.toUpperCase()] ?? 0;
  const rate = await em.findOne(TaxRate, { organization: organizationId, country: country.toUpperCase() });
  return rate?.basisPoints ?? 0;
}
