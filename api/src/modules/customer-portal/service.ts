/**
 * Customer portal rules: everything is read and written as the customer of the session
 * (`principal.customerId`). Never commits.
 */
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { fieldError, ResourceNotFound } from '../../kit/errors.ts';
import type { CustomerPrincipal } from '../../kit/principals.ts';
import { Customer } from '../customers/entities.ts';
import { createCustomerSession } from '../customer-sessions/service.ts';
import { TAX_ID_FORMATS } from '../customers/schemas.ts';
import { emitCustomerEvent, flushCustomer, updateCustomer } from '../customers/service.ts';
import { updateGrantAsCustomer, type GrantUpdateInput } from '../benefits/accounts.ts';
import { BenefitGrant, serializeBenefitGrant } from '../benefits/grants.ts';
import { queueBenefitRequestsDurably } from '../benefits/lifecycle.ts';
import { serializeBenefit } from '../benefits/schemas.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import type { PortalCustomerUpdate } from './schemas.ts';
import { checkoutScope, withinScope } from './scope.ts';

type AfterCommit = (fn: () => Promise<unknown>) => void;

export const GRANT_POPULATE = ['customer', 'benefit', 'benefit.organization'] as const;

/** The session's customer (live: a deleted customer's sessions do not resolve). */
export async function sessionCustomer(em: EntityManager, principal: CustomerPrincipal): Promise<Customer> {
  const c = await em.findOne(Customer, { id: principal.customerId, deletedAt: null }, { populate: ['organization'] });
  if (!c) throw ResourceNotFound('Customer not found');
  return c;
}

const EU_VAT = new Set(
  'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' '),
);
/** The tax id format a plain tax id takes in a country (the VAT / business number most used there). */
const COUNTRY_TAX_ID: Record<string, (typeof TAX_ID_FORMATS)[number]> = {
  AD: 'ad_nrt', AE: 'ae_trn', AR: 'ar_cuit', AU: 'au_abn', BH: 'bh_vat', BO: 'bo_tin', BR: 'br_cnpj', CA: 'ca_bn',
  CH: 'ch_vat', CL: 'cl_tin', CN: 'cn_tin', CO: 'co_nit', CR: 'cr_tin', DO: 'do_rcn', EC: 'ec_ruc', EG: 'eg_tin',
  GB: 'gb_vat', GE: 'ge_vat', HK: 'hk_br', ID: 'id_npwp', IL: 'il_vat', IN: 'in_gst', IS: 'is_vat', JP: 'jp_trn',
  KE: 'ke_pin', KR: 'kr_brn', KZ: 'kz_bin', LI: 'li_uid', MX: 'mx_rfc', MY: 'my_sst', NG: 'ng_tin', NO: 'no_vat',
  NZ: 'nz_gst', OM: 'om_vat', PE: 'pe_ruc', PH: 'ph_tin', RS: 'rs_pib', RU: 'ru_inn', SA: 'sa_vat', SG: 'sg_gst',
  SV: 'sv_nit', TH: 'th_vat', TR: 'tr_tin', TW: 'tw_vat', UA: 'ua_vat', US: 'us_ein', UY: 'uy_ruc', VE: 've_rif',
  VN: 'vn_tin', ZA: 'za_vat',
};

/**
 * `[value, format]` for a plain tax id in the billing country: separators dropped, upper-cased; EU
 * VAT numbers carry their country prefix (Greece: EL). 422 on `body.tax_id` when it cannot be read.
 */
export function normalizeTaxId(raw: string, country: string | null | undefined): [string, (typeof TAX_ID_FORMATS)[number]] {
  if (!country) throw fieldError(['body', 'tax_id'], 'Country is required to validate tax ID.', 'value_error', raw);
  let value = raw.replace(/[\s.\-/]/g, '').toUpperCase();
  let format: (typeof TAX_ID_FORMATS)[number] | undefined = COUNTRY_TAX_ID[country];
  if (EU_VAT.has(country)) {
    format = 'eu_vat';
    const prefix = country === 'GR' ? 'EL' : country;
    if (!value.startsWith(prefix)) value = `${prefix}${value}`;
  }
  if (!format || !/^[A-Z0-9]{4,30}$/.test(value)) {
    throw fieldError(['body', 'tax_id'], 'Invalid tax ID.', 'value_error', raw);
  }
  return [value, format];
}

/** Applies a portal update (email, name, billing address, tax id) to the customer. */
export async function updatePortalCustomer(em: EntityManager, c: Customer, input: PortalCustomerUpdate): Promise<void> {
  const country = input.billing_address !== undefined ? input.billing_address?.country : c.billingAddress?.country;
  const taxId = input.tax_id === undefined ? undefined : input.tax_id ? normalizeTaxId(input.tax_id, country) : null;
  await updateCustomer(em, c, {
    ...(input.email ? { email: input.email } : {}),
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.billing_address !== undefined ? { billing_address: input.billing_address } : {}),
    ...(taxId !== undefined ? { tax_id: taxId } : {}),
  });
}

/** The session's customer changed by the portal form, with its `customer.updated` event. */
export async function updateSessionCustomer(tx: EntityManager, principal: CustomerPrincipal, input: PortalCustomerUpdate): Promise<Customer> {
  const c = await sessionCustomer(tx, principal);
  await updatePortalCustomer(tx, c, input);
  await flushCustomer(tx, { email: input.email });
  emitCustomerEvent(tx, c, 'updated');
  await tx.flush();
  return c;
}

/**
 * The customer's change to one of their grants (the linked account): `benefit_grant.updated` when it
 * changed, and its requests queued for the grant workflow after commit (benefits/accounts.ts).
 */
export async function updateCustomerGrant(
  tx: EntityManager,
  afterCommit: AfterCommit,
  deps: Deps,
  customerId: string,
  grantId: string,
  input: GrantUpdateInput,
): Promise<{ grant: BenefitGrant; changed: boolean }> {
  const { grant, changed, previous, requests } = await updateGrantAsCustomer(tx, deps.integrations, customerId, grantId, input);
  const organizationId = grant.benefit.organization.id;
  if (changed) {
    await tx.flush();
    emitEvent(tx, organizationId, 'benefit_grant.updated', {
      ...serializeBenefitGrant(grant),
      benefit: serializeBenefit(grant.benefit),
      previous_properties: previous,
    });
    await tx.flush();
  }
  if (requests.length) {
    queueBenefitRequestsDurably(tx, afterCommit, deps, { kind: 'grant-requests', benefitId: grant.benefit.id, customerId, requests }, organizationId);
  }
  return { grant, changed };
}

/** A grant of the session's customer (within a checkout-scoped session's reach), with what the read model needs; 404 otherwise. */
export async function findCustomerGrant(em: EntityManager, principal: CustomerPrincipal, id: string): Promise<BenefitGrant> {
  const scope = await checkoutScope(em, principal);
  const grant = await em.findOne(BenefitGrant, withinScope({ id, customer: principal.customerId }, scope?.grantIds), {
    populate: GRANT_POPULATE,
  });
  if (!grant) throw ResourceNotFound('Benefit grant not found');
  return grant;
}

/**
 * Stores a connected GitHub / Discord account on the customer and hands it to the customer's grants
 * of that platform that have none yet, as if the customer chose it on each grant (answers how many).
 */
export async function linkConnectedAccount(
  tx: EntityManager,
  afterCommit: AfterCommit,
  deps: Deps,
  customerId: string,
  benefitType: 'github_repository' | 'discord',
  platform: string,
  account: { id: string; username: string },
): Promise<number> {
  const customer = await tx.findOne(Customer, { id: customerId, deletedAt: null });
  if (!customer) throw ResourceNotFound('Customer not found');
  customer.oauthAccounts = { ...(customer.oauthAccounts ?? {}), [platform]: { account_id: account.id, account_username: account.username } };
  await tx.flush();
  const grants = await tx.find(BenefitGrant, { customer: customerId, revokedAt: null, grantedAt: null, benefit: { type: benefitType } });
  let linked = 0;
  for (const g of grants.filter((x) => !x.properties.account_id)) {
    const u = await updateCustomerGrant(tx, afterCommit, deps, customerId, g.id, { benefit_type: benefitType, properties: { account_id: account.id } });
    if (u.changed) linked++;
  }
  return linked;
}

/** Forgets a connected account (404 when there is none); grants keep the account they were given. */
export async function forgetConnectedAccount(tx: EntityManager, customerId: string, platform: string): Promise<void> {
  const c = await tx.findOneOrFail(Customer, { id: customerId });
  if (!c.oauthAccounts?.[platform]) throw ResourceNotFound('No such connected account');
  const { [platform]: _gone, ...rest } = c.oauthAccounts;
  c.oauthAccounts = rest;
  await tx.flush();
}

/** A session token for the code's customer, the code consumed; null when the code is unknown, expired or its customer gone. */
export async function redeemSignInCode(tx: EntityManager, hash: string): Promise<string | null> {
  // Found and consumed in one statement: two concurrent uses cannot both succeed.
  const rows = await tx.execute<{ customer_id: string }[]>(
    `delete from customer_session_codes where code_hash = ? and expires_at > now() returning customer_id`,
    [hash],
  );
  const customerId = rows[0]?.customer_id;
  if (!customerId) return null;
  const customer = await tx.findOne(Customer, { id: customerId, deletedAt: null });
  if (!customer) return null;
  const { token } = createCustomerSession(tx, customer);
  await tx.flush();
  return token;
}
