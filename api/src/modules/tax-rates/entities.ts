/**
 * Tax rates of an organization, one per country (ISO 3166-1 alpha-2), in basis points. A checkout
 * taxes its net amount at the rate of its billing address's country; no matching rate means no tax.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';

export const TaxRate = defineEntity({
  name: 'TaxRate',
  tableName: 'tax_rates',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    /** Upper-case ISO 3166-1 alpha-2. */
    country: p.string().length(2),
    /** 0..10000. */
    basisPoints: p.integer(),
  },
  uniques: [{ name: 'tax_rates_organization_country_unique', properties: ['organization', 'country'] }],
});
export type TaxRate = InferEntity<typeof TaxRate>;
