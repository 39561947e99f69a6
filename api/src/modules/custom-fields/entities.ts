/**
 * Custom fields: extra questions a seller attaches to products and asks at checkout. The answers are
 * stored by `slug`, which is unique among an organization's live fields. Deleting is soft (`deletedAt`)
 * so answers already collected keep their meaning.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';

export const CUSTOM_FIELD_TYPES = ['text', 'number', 'date', 'checkbox', 'select'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

/** Stored properties: the form texts plus the type's own settings (see schemas.ts). */
export interface CustomFieldProperties {
  form_label?: string;
  form_help_text?: string;
  form_placeholder?: string;
  textarea?: boolean;
  min_length?: number;
  max_length?: number;
  ge?: number;
  le?: number;
  options?: { value: string; label: string }[];
}

export const CustomField = defineEntity({
  name: 'CustomField',
  tableName: 'custom_fields',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    type: p.enum(CUSTOM_FIELD_TYPES),
    slug: p.string(),
    name: p.string(),
    properties: p.json<CustomFieldProperties>(),
    metadata: p.json<Metadata>(),
    deletedAt: p.datetime().nullable(),
  },
  indexes: [
    {
      name: 'custom_fields_organization_slug_live_unique',
      expression:
        'create unique index "custom_fields_organization_slug_live_unique" on "custom_fields" ("organization_id", "slug") where "deleted_at" is null',
    },
  ],
});
export type CustomField = InferEntity<typeof CustomField>;
