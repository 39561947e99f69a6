/** Customers of an organization (buyers). Soft-deleted with `deletedAt`; email unique per organization among live ones. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';

export interface BillingAddress {
  line1: string | null;
  line2: string | null;
  postal_code: string | null;
  city: string | null;
  state: string | null;
  country: string;
}

export const Customer = defineEntity({
  name: 'Customer',
  tableName: 'customers',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    /** Stored lower-cased. */
    email: p.string(),
    emailVerified: p.boolean().default(false),
    name: p.string().nullable(),
    externalId: p.string().nullable(),
    billingAddress: p.json<BillingAddress>().nullable(),
    /** `[value, type]` or null, as the public API. */
    taxId: p.json<[string, string | null]>().nullable(),
    metadata: p.json<Metadata>(),
    /** The user account this customer is linked to, when the buyer has one. */
    userId: p.uuid().nullable(),
    deletedAt: p.datetime().nullable(),
    /** The customer at the payment processor (saved cards hang off it); created on first payment. */
    processorCustomerId: p.string().nullable(),
    /** Accounts the customer connected in the portal (OAuth), by platform: `github`, `discord`. */
    oauthAccounts: p.json<Record<string, { account_id: string; account_username: string | null }>>().nullable(),
  },
  indexes: [
    {
      name: 'customers_organization_email_live_unique',
      expression:
        'create unique index "customers_organization_email_live_unique" on "customers" ("organization_id", "email") where "deleted_at" is null',
    },
    {
      name: 'customers_organization_external_id_live_unique',
      expression:
        'create unique index "customers_organization_external_id_live_unique" on "customers" ("organization_id", "external_id") where "deleted_at" is null and "external_id" is not null',
    },
    {
      // The seller's list of live customers in its default order (newest first, then id).
      name: 'customers_organization_live_created_at_id_index',
      expression:
        'create index "customers_organization_live_created_at_id_index" on "customers" ("organization_id", "created_at" desc, "id") where "deleted_at" is null',
    },
  ],
});
export type Customer = InferEntity<typeof Customer>;
