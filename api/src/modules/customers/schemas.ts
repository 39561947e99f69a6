/** Wire shapes of customers (and customer state), as `@polar-sh/sdk` 0.29.3 parses them. */
import { createHash } from 'node:crypto';
import { z } from 'zod/v4';
import { metadataSchema } from '../../kit/validation.ts';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import type { BillingAddress, Customer } from './entities.ts';

/** ISO 3166-1 alpha-2 (officially assigned codes). */
export const COUNTRY_CODES = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO ' +
    'FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE ' +
    'JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO ' +
    'MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW ' +
    'PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM ' +
    'TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

/** Tax id formats the SDK knows (its closed `TaxIDFormat` enum). */
export const TAX_ID_FORMATS = [
  'ad_nrt', 'ae_trn', 'ar_cuit', 'au_abn', 'au_arn', 'bg_uic', 'bh_vat', 'bo_tin', 'br_cnpj', 'br_cpf',
  'ca_bn', 'ca_gst_hst', 'ca_pst_bc', 'ca_pst_mb', 'ca_pst_sk', 'ca_qst', 'ch_uid', 'ch_vat', 'cl_tin',
  'cn_tin', 'co_nit', 'cr_tin', 'de_stn', 'do_rcn', 'ec_ruc', 'eg_tin', 'es_cif', 'eu_oss_vat', 'eu_vat',
  'gb_vat', 'ge_vat', 'hk_br', 'hr_oib', 'hu_tin', 'id_npwp', 'il_vat', 'in_gst', 'is_vat', 'jp_cn', 'jp_rn',
  'jp_trn', 'ke_pin', 'kr_brn', 'kz_bin', 'li_uid', 'mx_rfc', 'my_frp', 'my_itn', 'my_sst', 'ng_tin',
  'no_vat', 'no_voec', 'nz_gst', 'om_vat', 'pe_ruc', 'ph_tin', 'ro_tin', 'rs_pib', 'ru_inn', 'ru_kpp',
  'sa_vat', 'sg_gst', 'sg_uen', 'si_tin', 'sv_nit', 'th_vat', 'tr_tin', 'tw_vat', 'ua_vat', 'us_ein',
  'uy_ruc', 've_rif', 'vn_tin', 'za_vat',
] as const;

const line = z.string().trim().max(255).nullish();
export const countrySchema = z
  .string()
  .meta({ enum: [...COUNTRY_CODES] })
  .transform((c) => c.toUpperCase())
  .refine((c) => COUNTRY_CODES.has(c), { message: 'Must be an ISO 3166-1 alpha-2 country code' });

export const billingAddressSchema = z
  .object({ line1: line, line2: line, postal_code: line, city: line, state: line, country: countrySchema })
  .transform(
    (a): BillingAddress => ({
      line1: a.line1 || null,
      line2: a.line2 || null,
      postal_code: a.postal_code || null,
      city: a.city || null,
      state: a.state || null,
      country: a.country,
    }),
  );

/** `[value, type]`. */
export const taxIdSchema = z.tuple([z.string().trim().min(1).max(255), z.enum(TAX_ID_FORMATS)]);

export const customerEmailSchema = z
  .string()
  .trim()
  .max(255) // customers.email is a varchar(255) (a longer address was a 500)
  // The document shows what the piped check accepts (the input side of a pipe is only a string).
  .meta({ pattern: z.regexes.email.source })
  .pipe(z.email())
  .transform((e) => e.toLowerCase());
const externalIdSchema = z.string().min(1).max(255);
const nameSchema = z.string().trim().max(255); // customers.name is a varchar(255)

export const customerCreateSchema = z.object({
  email: customerEmailSchema,
  name: nameSchema.nullish(),
  external_id: externalIdSchema.nullish(),
  metadata: metadataSchema.optional(),
  billing_address: billingAddressSchema.nullish(),
  tax_id: taxIdSchema.nullish(),
  organization_id: z.uuid().nullish(),
});
export type CustomerCreate = z.output<typeof customerCreateSchema>;

/** Every key optional; `null` clears nullable fields (name, external_id, billing_address, tax_id). */
export const customerUpdateSchema = z.object({
  email: customerEmailSchema.nullish(),
  name: nameSchema.nullish(),
  external_id: externalIdSchema.nullish(),
  metadata: metadataSchema.nullish(),
  billing_address: billingAddressSchema.nullish(),
  tax_id: taxIdSchema.nullish(),
});
export type CustomerUpdate = z.output<typeof customerUpdateSchema>;

export const addressOutSchema = z.object({
  line1: z.string().nullable(),
  line2: z.string().nullable(),
  postal_code: z.string().nullable(),
  city: z.string().nullable(),
  state: z.string().nullable(),
  country: z.string(),
});

export const customerSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  metadata: metadataOutputSchema,
  external_id: z.string().nullable(),
  email: z.string(),
  email_verified: z.boolean(),
  name: z.string().nullable(),
  billing_address: addressOutSchema.nullable(),
  tax_id: z.tuple([z.string(), z.string().nullable()]).nullable(),
  organization_id: z.uuid(),
  deleted_at: z.string().nullable(),
  avatar_url: z.string(),
});
export type CustomerOut = z.infer<typeof customerSchema>;

export const customerStateSchema = customerSchema.extend({
  active_subscriptions: z.array(z.record(z.string(), z.unknown())),
  granted_benefits: z.array(z.record(z.string(), z.unknown())),
  active_meters: z.array(z.record(z.string(), z.unknown())),
});

/** The wire billing address: every line key present (null when absent), country required. */
export function serializeBillingAddress(a: BillingAddressIn | null | undefined) {
  if (!a) return null;
  return {
    line1: a.line1 ?? null,
    line2: a.line2 ?? null,
    postal_code: a.postal_code ?? null,
    city: a.city ?? null,
    state: a.state ?? null,
    country: a.country,
  };
}
type BillingAddressIn = { country: string } & Partial<Record<'line1' | 'line2' | 'postal_code' | 'city' | 'state', string | null>>;

/** A Gravatar URL for the email (`d=404`: no generated placeholder); only a URL, never fetched here. */
export function avatarUrl(email: string): string {
  return `https://www.gravatar.com/avatar/${createHash('md5').update(email.trim().toLowerCase()).digest('hex')}?d=404`;
}

export function serializeCustomer(c: Customer): CustomerOut {
  return {
    id: c.id,
    created_at: c.createdAt.toISOString(),
    modified_at: c.modifiedAt?.toISOString() ?? null,
    metadata: c.metadata,
    external_id: c.externalId ?? null,
    email: c.email,
    email_verified: c.emailVerified,
    name: c.name ?? null,
    billing_address: serializeBillingAddress(c.billingAddress),
    tax_id: c.taxId ?? null,
    organization_id: c.organization.id,
    deleted_at: c.deletedAt?.toISOString() ?? null,
    avatar_url: avatarUrl(c.email),
  };
}
