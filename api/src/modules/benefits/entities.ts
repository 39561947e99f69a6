/**
 * Benefits: what a product grants its buyers (a license key, files, a Discord role, ...). The
 * type-specific settings live in `properties`, validated by the type's strategy (types/*.ts).
 * Deleting is soft (`deletedAt`): grants keep pointing at the benefit.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';

export const BENEFIT_TYPES = ['custom', 'discord', 'downloadables', 'github_repository', 'license_keys', 'meter_credit'] as const;
export type BenefitType = (typeof BENEFIT_TYPES)[number];

export const Benefit = defineEntity({
  name: 'Benefit',
  tableName: 'benefits',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    type: p.enum(BENEFIT_TYPES),
    description: p.string(),
    /** custom benefits only: whether the benefit counts as taxable. */
    isTaxApplicable: p.boolean().default(false),
    /** Whether it may be attached to products (every seller-created benefit is). */
    selectable: p.boolean().default(true),
    /** Whether the seller may delete it (every seller-created benefit is). */
    deletable: p.boolean().default(true),
    /** The type's settings as stored (write-only values such as a Discord guild token included). */
    properties: p.json<Record<string, unknown>>(),
    deletedAt: p.datetime().nullable(),
  },
  indexes: [
    {
      // The seller's list of live benefits in its default order (newest first, then id).
      name: 'benefits_organization_live_created_at_id_index',
      expression:
        'create index "benefits_organization_live_created_at_id_index" on "benefits" ("organization_id", "created_at" desc, "id") where "deleted_at" is null',
    },
  ],
});
export type Benefit = InferEntity<typeof Benefit>;
