/** Customer sessions: `polar_cst_…` bearer tokens for the customer portal. Only the SHA-256 is stored. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Checkout } from '../checkouts/entities.ts';
import { Customer } from '../customers/entities.ts';

export const CustomerSession = defineEntity({
  name: 'CustomerSession',
  tableName: 'customer_sessions',
  properties: {
    ...baseProperties,
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    tokenHash: p.string().unique().hidden(),
    expiresAt: p.datetime().index(),
    /**
     * Set on the session a checkout confirmation returns: it reaches only what that checkout bought
     * (customer-portal/scope.ts). Null: a full session (seller-created, or the portal's email sign-in).
     * Deleting the checkout deletes the session (it must never widen into a full one).
     */
    checkout: () => p.manyToOne(Checkout).nullable().deleteRule('cascade').index(),
  },
});
export type CustomerSession = InferEntity<typeof CustomerSession>;
