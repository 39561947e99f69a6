/** Wire shapes of custom fields, as `@polar-sh/sdk` 0.29.3 parses them (`CustomField*`). */
import { z } from 'zod/v4';
import { metadataSchema } from '../../kit/validation.ts';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import { CUSTOM_FIELD_TYPES, type CustomField, type CustomFieldProperties } from './entities.ts';

/** Lower-cased; letters, digits, `-` and `_` (it is the key under which answers are stored). */
export const customFieldSlugSchema = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(128)
  .regex(/^[a-z0-9_-]+$/, { message: 'Slug can only contain ASCII letters, numbers, hyphens and underscores' })
  // What is accepted before trimming and lower-casing.
  .meta({ pattern: '^\\s*[A-Za-z0-9_-]+\\s*$' });
const nameSchema = z.string().trim().min(1).max(255);
const formText = z.string().trim().min(1).max(1000).optional();

const formProperties = {
  form_label: formText,
  form_help_text: formText,
  form_placeholder: formText,
};

const comparable = {
  ...formProperties,
  ge: z.number().int().optional(),
  le: z.number().int().optional(),
};
const geLe = (p: { ge?: number; le?: number }) => p.ge === undefined || p.le === undefined || p.ge <= p.le;

export const customFieldPropertiesSchemas = {
  text: z
    .object({
      ...formProperties,
      textarea: z.boolean().optional(),
      min_length: z.number().int().min(0).optional(),
      max_length: z.number().int().min(0).optional(),
    })
    .refine((p) => p.min_length === undefined || p.max_length === undefined || p.min_length <= p.max_length, {
      message: 'min_length must not exceed max_length',
      path: ['max_length'],
    }),
  number: z.object(comparable).refine(geLe, { message: 'ge must not exceed le', path: ['le'] }),
  /** ge/le are Unix timestamps (seconds), as the public API. */
  date: z.object(comparable).refine(geLe, { message: 'ge must not exceed le', path: ['le'] }),
  checkbox: z.object(formProperties),
  select: z
    .object({
      ...formProperties,
      options: z
        .array(z.object({ value: z.string().trim().min(1).max(255), label: z.string().trim().min(1).max(255) }))
        .min(1)
        .max(100),
    })
    .refine((p) => new Set(p.options.map((o) => o.value)).size === p.options.length, {
      message: 'Option values must be unique',
      path: ['options'],
    }),
} as const;

const createBase = {
  slug: customFieldSlugSchema,
  name: nameSchema,
  metadata: metadataSchema.optional(),
  organization_id: z.uuid().nullish(),
};
export const customFieldCreateSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), ...createBase, properties: customFieldPropertiesSchemas.text }),
  z.object({ type: z.literal('number'), ...createBase, properties: customFieldPropertiesSchemas.number }),
  z.object({ type: z.literal('date'), ...createBase, properties: customFieldPropertiesSchemas.date }),
  z.object({ type: z.literal('checkbox'), ...createBase, properties: customFieldPropertiesSchemas.checkbox }),
  z.object({ type: z.literal('select'), ...createBase, properties: customFieldPropertiesSchemas.select }),
]);
export type CustomFieldCreate = z.infer<typeof customFieldCreateSchema>;

/** `type` is required (it selects the properties' shape) and must be the field's current type. */
const updateBase = {
  slug: customFieldSlugSchema.nullish(),
  name: nameSchema.nullish(),
  metadata: metadataSchema.nullish(),
};
export const customFieldUpdateSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), ...updateBase, properties: customFieldPropertiesSchemas.text.nullish() }),
  z.object({ type: z.literal('number'), ...updateBase, properties: customFieldPropertiesSchemas.number.nullish() }),
  z.object({ type: z.literal('date'), ...updateBase, properties: customFieldPropertiesSchemas.date.nullish() }),
  z.object({ type: z.literal('checkbox'), ...updateBase, properties: customFieldPropertiesSchemas.checkbox.nullish() }),
  z.object({ type: z.literal('select'), ...updateBase, properties: customFieldPropertiesSchemas.select.nullish() }),
]);
export type CustomFieldUpdate = z.infer<typeof customFieldUpdateSchema>;

const readProperties = z.object({
  form_label: z.string().optional(),
  form_help_text: z.string().optional(),
  form_placeholder: z.string().optional(),
  textarea: z.boolean().optional(),
  min_length: z.number().int().optional(),
  max_length: z.number().int().optional(),
  ge: z.number().int().optional(),
  le: z.number().int().optional(),
  options: z.array(z.object({ value: z.string(), label: z.string() })).optional(),
});

export const customFieldSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  metadata: metadataOutputSchema,
  type: z.enum(CUSTOM_FIELD_TYPES),
  slug: z.string(),
  name: z.string(),
  organization_id: z.uuid(),
  properties: readProperties,
});
export type CustomFieldRead = z.infer<typeof customFieldSchema>;

/** Drops keys that are not set, so each type's properties carry only their own settings. */
function cleanProperties(p: CustomFieldProperties): CustomFieldProperties {
  return Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined && v !== null)) as CustomFieldProperties;
}

export function serializeCustomField(f: CustomField): CustomFieldRead {
  return {
    id: f.id,
    created_at: f.createdAt.toISOString(),
    modified_at: f.modifiedAt?.toISOString() ?? null,
    metadata: f.metadata,
    type: f.type,
    slug: f.slug,
    name: f.name,
    organization_id: f.organization.id,
    properties: cleanProperties(f.properties),
  };
}

export { cleanProperties as cleanCustomFieldProperties };
