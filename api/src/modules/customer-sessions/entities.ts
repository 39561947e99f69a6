/** Customer sessions: `polar_cst_…` bearer tokens for the customer portal. Only the SHA-256 is stored. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Customer } from '../customers/entities.ts';

export const CustomerSession = defineEntity({
  name: 'CustomerSession',
  tableName: 'customer_sessions',
  properties: {
    ...baseProperties,
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    tokenHash: p.string().unique().hidden(),
    expiresAt: p.datetime().index(),
  },
});
export type CustomerSession = InferEntity<typeof CustomerSession>;
