/**
 * One-time sign-in codes of the customer portal (`POST /v1/customer-portal/customer-session/request`).
 * Only an HMAC of the code is stored; a code is deleted when used, and expires after 15 minutes.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Customer } from '../customers/entities.ts';

export const CustomerSessionCode = defineEntity({
  name: 'CustomerSessionCode',
  tableName: 'customer_session_codes',
  properties: {
    ...baseProperties,
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    codeHash: p.string().unique().hidden(),
    expiresAt: p.datetime().index(),
  },
});
export type CustomerSessionCode = InferEntity<typeof CustomerSessionCode>;
