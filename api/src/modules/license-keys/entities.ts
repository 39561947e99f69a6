/**
 * License keys issued by `license_keys` benefits, and their activations (machines or installs a
 * customer has activated the key on). Activations are soft-deleted on deactivation.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Customer } from '../customers/entities.ts';
import { Benefit } from '../benefits/entities.ts';

export const LICENSE_KEY_STATUSES = ['granted', 'revoked', 'disabled'] as const;
export type LicenseKeyStatus = (typeof LICENSE_KEY_STATUSES)[number];

export const LicenseKey = defineEntity({
  name: 'LicenseKey',
  tableName: 'license_keys',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    benefit: () => p.manyToOne(Benefit).deleteRule('cascade').index(),
    /** `[PREFIX-]` + upper-case UUID4; looked up by (organization, key) without authentication. */
    key: p.string(),
    /** `****-` + the key's last 6 characters. */
    displayKey: p.string(),
    status: p.enum(LICENSE_KEY_STATUSES).default('granted'),
    /** null: no activations allowed/tracked (activate answers 403). */
    limitActivations: p.integer().nullable(),
    usage: p.integer().default(0),
    limitUsage: p.integer().nullable(),
    validations: p.integer().default(0),
    lastValidatedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
    activations: () => p.oneToMany(LicenseKeyActivation).mappedBy('licenseKey').orderBy({ createdAt: 'asc' }),
  },
  uniques: [{ properties: ['organization', 'key'] }],
});
export type LicenseKey = InferEntity<typeof LicenseKey>;

export const LicenseKeyActivation = defineEntity({
  name: 'LicenseKeyActivation',
  tableName: 'license_key_activations',
  properties: {
    ...baseProperties,
    licenseKey: () => p.manyToOne(LicenseKey).deleteRule('cascade').index(),
    label: p.string(),
    /** Free-form data the client attached on activation. */
    meta: p.json<Record<string, unknown>>(),
    /** Conditions a later validation must match (e.g. a machine fingerprint). */
    conditions: p.json<Record<string, unknown>>(),
    deletedAt: p.datetime().nullable(),
  },
});
export type LicenseKeyActivation = InferEntity<typeof LicenseKeyActivation>;
